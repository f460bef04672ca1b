// Data types, errors and paths shared by flopline's built-in kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace flopline::kernels {

// Element types. tf32 is stored as fp32 and multiplied on tensor cores with a 10-bit
// mantissa; accumulation is always fp32.
enum class DType { f32, tf32, bf16, f16 };

const char* dtype_name(DType t);   // "fp32", "tf32", "bf16", "fp16" (trace precision words)
std::size_t dtype_bytes(DType t);  // storage bytes per element (tf32: 4)
bool parse_dtype(const std::string& text, DType* out);  // "fp32"/"f32"/"float32", "tf32", "bf16"...

// A call that cannot run as asked (shape mismatch, null pointer, unsupported dtype or
// architecture). Thrown before anything is launched.
class KernelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The CUDA runtime reported an error while launching (message names the call).
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which implementation runs a matmul. automatic picks the fastest that supports the
// problem on the current device; the others force one (tests cover each).
enum class MatmulPath {
  automatic,
  simt,  // fp32 FFMA, any sm_80+
  sm80,  // mma.sync tensor cores (tf32/bf16/fp16), any sm_80+, any shape and alignment
  sm90,  // wgmma + TMA (tf32/bf16/fp16), sm_90 only, row strides multiple of 16 bytes
};
const char* matmul_path_name(MatmulPath p);

}  // namespace flopline::kernels
