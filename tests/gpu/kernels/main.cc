// GPU tests of the built-in kernels (gpu_test_main.h says what skipped means).
#include "gpu_test_main.h"

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
