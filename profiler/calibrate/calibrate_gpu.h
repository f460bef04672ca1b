// The measurements behind `flopline calibrate`, in CUDA (calibrate_gpu.cu): cuBLAS
// matrix products per precision and a device-to-device copy, each the best of several
// timed repetitions on random data. Plain types only, so the C++20 side that writes the
// result (calibrate_main.cc) needs no CUDA header.
#pragma once

#include <string>
#include <vector>

namespace flopline::calibrate {

struct DeviceIdentity {
  int ordinal = 0;
  std::string name;
  std::string uuid;  // "GPU-..."
};

struct Measurement {
  std::string precision;  // "fp32", "tf32", "bf16", "fp16"
  double flops_per_s = 0;
  double ms = 0;  // best time of one product
};

struct GpuResult {
  bool ok = false;
  std::string error;
  DeviceIdentity device;
  std::vector<Measurement> matmul;
  double copy_bytes_per_s = 0;  // bytes read + written per second
  double copy_ms = 0;
};

// `size`: the matrices are size x size; `copy_bytes`: the buffer copied.
GpuResult measure(int ordinal, int size, std::size_t copy_bytes, int repetitions);

}  // namespace flopline::calibrate
