// Uses the installed flopline::flopline and flopline::kernels: a Session is made (not
// started: that needs a GPU), and matmul() refuses null pointers before any launch, or
// says there is no GPU; either way it throws, from the installed library.
#include <cstdio>
#include <exception>

#include "flopline/kernels/matmul.h"
#include "flopline/session.h"

int main() {
  flopline::Session session;
  flopline::kernels::MatmulProblem p{};
  p.m = p.n = p.k = 64;
  try {
    flopline::kernels::matmul(p);
  } catch (const std::exception& e) {
    std::printf("session=%d kernels threw: %s\n", session.running() ? 1 : 0, e.what());
    return 0;
  }
  std::printf("matmul accepted null pointers\n");
  return 1;
}
