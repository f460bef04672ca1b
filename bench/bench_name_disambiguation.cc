// Time to tell apart N shortened kernel names that share their start and end (as
// Inductor, CUTLASS and Triton autotune variants do): trace::disambiguate_names, which
// `flopline stats` runs on every default table. Usage: bench_name_disambiguation [N...]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flopline/trace/name_text.h"

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {2000, 8000, 30000, 100000};
  for (std::size_t n : sizes) {
    std::vector<std::string> names;
    names.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      names.push_back("void at::native::(anonymous namespace)::kernel<" +
                      std::to_string(i * 7919 % n) +
                      ", float, true>(at::native::Params<float, 4>, unsigned int)");
    }
    std::vector<std::string_view> full(names.begin(), names.end());
    std::vector<std::string> shown(n, "void at::native::(anonymous nam...>, unsigned int)");
    const auto t0 = std::chrono::steady_clock::now();
    flopline::trace::disambiguate_names(full, shown);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("names %zu: %.3f s\n", n, s);
  }
  return 0;
}
