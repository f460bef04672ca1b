// main() of the GPU test programs. ctest's skip code (77) means one thing only: this
// machine has no CUDA device (the runtime says cudaErrorNoDevice, or no driver library is
// installed at all). Any other CUDA or driver failure is a failure that names its
// reason, and a run in which every test skipped itself reports skipped, never passed.
#pragma once

namespace flopline::gputest {

// 0: a device is there; 77: none (printed "skipped: ..."); 1: the runtime or the driver
// failed (printed the reason).
int cuda_device_status();

// InitGoogleTest, cuda_device_status, RUN_ALL_TESTS; 77 when every test that ran skipped
// itself, 1 when the filter selected no test.
int run_gpu_tests(int argc, char** argv);

}  // namespace flopline::gputest
