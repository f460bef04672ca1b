#include "gpu_test_main.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>

namespace flopline::gputest {

int cuda_device_status() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && devices == 0)) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  if (e == cudaErrorInsufficientDriver) {
    // The static runtime says this both for an old driver and for none at all.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) {
      std::printf("skipped: no CUDA device (no CUDA driver installed: %s)\n", dlerror());
      return 77;
    }
    dlclose(driver);
  }
  if (e != cudaSuccess) {
    std::fprintf(stderr, "FAILED: the CUDA runtime cannot count the devices: %s (%s)\n",
                 cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

int run_gpu_tests(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();  // lists, runs nothing
  if (const int status = cuda_device_status(); status != 0) return status;
  const int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
  if (rc != 0) return rc;
  if (unit->test_to_run_count() == 0) {
    std::fprintf(stderr, "FAILED: no test matched the filter\n");
    return 1;
  }
  if (unit->successful_test_count() == 0) {  // rc 0: every test passed or skipped
    std::printf("skipped: every test skipped itself (reasons above)\n");
    return 77;
  }
  return 0;
}

}  // namespace flopline::gputest
