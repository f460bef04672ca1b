#include "flopline/kernels/checks.h"

#include <cstdint>
#include <limits>
#include <string>

namespace flopline::kernels {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw KernelError(what);
}

std::string arch_text(int arch) {
  return "sm_" + std::to_string(arch);
}

// Element offsets are computed in 64 bits, row and column indices in 32 bits.
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();

void check_dim(const char* what, std::int64_t v) {
  if (v < 1) fail(std::string("matmul: ") + what + " = " + std::to_string(v) + " (must be >= 1)");
  if (v > kMaxDim)
    fail(std::string("matmul: ") + what + " = " + std::to_string(v) + " exceeds 2^31-1");
}

bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// Vector loads assume each pointer is at least aligned to its element (a bf16 pointer at
// an odd byte address would fault or tear).
void check_element_aligned(const std::string& op, const char* what, const void* ptr, DType t) {
  const std::size_t es = dtype_bytes(t);
  if (reinterpret_cast<std::uintptr_t>(ptr) % es != 0) {
    fail(op + ": " + what + " is not aligned to its " + std::to_string(es) + "-byte " +
         dtype_name(t) + " element");
  }
}

}  // namespace

void check_matmul(const MatmulProblem& p, int arch) {
  if (arch < 80)
    fail("matmul: needs compute capability 8.0 or newer, this device is " + arch_text(arch));
  check_dim("m", p.m);
  check_dim("n", p.n);
  check_dim("k", p.k);
  if (!p.a) fail("matmul: A is a null pointer");
  if (!p.b) fail("matmul: B is a null pointer");
  if (!p.c) fail("matmul: C is a null pointer");
  const bool ok =
      (p.in == DType::f32 && p.out == DType::f32) || (p.in == DType::tf32 && p.out == DType::f32) ||
      ((p.in == DType::bf16 || p.in == DType::f16) && (p.out == p.in || p.out == DType::f32));
  if (!ok) {
    fail(std::string("matmul: unsupported dtypes ") + dtype_name(p.in) + " -> " +
         dtype_name(p.out) +
         " (supported: fp32->fp32, tf32->fp32, bf16->bf16|fp32, fp16->fp16|fp32)");
  }
}

namespace {

// Why the sm90 path cannot take a problem that check_matmul accepted; empty when it can.
// A plain function (no exception) because automatic path selection asks on every call.
std::string sm90_refusal(const MatmulProblem& p, int arch) {
  if (p.in == DType::f32)
    return "matmul: path sm90 runs tensor-core dtypes (tf32, bf16, fp16), not fp32";
  if (arch != 90) return "matmul: path sm90 needs an sm_90 device, this one is " + arch_text(arch);
  const std::int64_t es = static_cast<std::int64_t>(dtype_bytes(p.in));
  // TMA: global row strides and base addresses must be multiples of 16 bytes.
  if ((p.k * es) % 16 != 0) {
    return "matmul: path sm90 needs k*" + std::to_string(es) +
           " bytes to be a multiple of 16 (k = " + std::to_string(p.k) + ")";
  }
  if ((p.n * es) % 16 != 0) {
    return "matmul: path sm90 needs n*" + std::to_string(es) +
           " bytes to be a multiple of 16 (n = " + std::to_string(p.n) + ")";
  }
  if (!aligned16(p.a) || !aligned16(p.b)) return "matmul: path sm90 needs A and B 16-byte aligned";
  // The epilogue stores column pairs (8 bytes fp32, 4 bytes 16-bit).
  if (!aligned16(p.c)) return "matmul: path sm90 needs C 16-byte aligned";
  return {};
}

}  // namespace

void check_matmul_path(const MatmulProblem& p, MatmulPath path, int arch) {
  check_matmul(p, arch);
  switch (path) {
    case MatmulPath::automatic:
      return;
    case MatmulPath::simt:
      if (p.in != DType::f32)
        fail("matmul: path simt runs fp32 only, not " + std::string(dtype_name(p.in)));
      return;
    case MatmulPath::sm80:
      if (p.in == DType::f32)
        fail("matmul: path sm80 runs tensor-core dtypes (tf32, bf16, fp16), not fp32");
      return;
    case MatmulPath::sm90: {
      const std::string why = sm90_refusal(p, arch);
      if (!why.empty()) fail(why);
      return;
    }
  }
}

MatmulPath choose_matmul_path(const MatmulProblem& p, int arch) {
  if (p.in == DType::f32) return MatmulPath::simt;
  return sm90_refusal(p, arch).empty() ? MatmulPath::sm90 : MatmulPath::sm80;
}

void check_elementwise(const ElementwiseProblem& p, ElementwiseOp op, int arch, int custom_inputs) {
  const std::string name = elementwise_op_name(op);
  if (arch < 80)
    fail(name + ": needs compute capability 8.0 or newer, this device is " + arch_text(arch));
  if (p.n < 0) fail(name + ": n = " + std::to_string(p.n) + " is negative");
  if (p.t == DType::tf32) fail(name + ": tf32 is a matmul precision; use fp32 for elementwise");
  if (op == ElementwiseOp::custom && custom_inputs != 1 && custom_inputs != 2) {
    fail(name + ": custom_inputs = " + std::to_string(custom_inputs) + " (must be 1 or 2)");
  }
  if (p.n == 0) return;  // nothing to do, nothing to check
  const bool binary = op == ElementwiseOp::add || op == ElementwiseOp::mul ||
                      op == ElementwiseOp::axpy ||
                      (op == ElementwiseOp::custom && custom_inputs == 2);
  if (!p.x) fail(name + ": x is a null pointer");
  if (binary && !p.y) fail(name + ": y is a null pointer");
  if (!binary && p.y) fail(name + ": y must be null for a one-input op");
  if (!p.out) fail(name + ": out is a null pointer");
  check_element_aligned(name, "x", p.x, p.t);
  if (binary) check_element_aligned(name, "y", p.y, p.t);
  check_element_aligned(name, "out", p.out, p.t);
}

void check_softmax(const SoftmaxProblem& p, int arch) {
  const std::string name = "softmax";
  if (arch < 80)
    fail(name + ": needs compute capability 8.0 or newer, this device is " + arch_text(arch));
  if (p.m < 0) fail(name + ": m = " + std::to_string(p.m) + " is negative");
  if (p.n < 0) fail(name + ": n = " + std::to_string(p.n) + " is negative");
  if (p.m > kMaxDim) fail(name + ": m = " + std::to_string(p.m) + " exceeds 2^31-1");
  if (p.n > kMaxDim) fail(name + ": n = " + std::to_string(p.n) + " exceeds 2^31-1");
  if (p.in == DType::tf32) fail(name + ": tf32 is a matmul precision; use fp32 input for softmax");
  const bool out_ok =
      p.out_type == DType::f32 || (p.out_type == p.in && p.in != DType::tf32) ||
      (p.in == DType::f32 && (p.out_type == DType::bf16 || p.out_type == DType::f16));
  if (!out_ok) {
    fail(name + ": unsupported output type " + dtype_name(p.out_type) + " for " + dtype_name(p.in) +
         " input (supported: fp32, the input type, or bf16/fp16 from fp32)");
  }
  if (p.m == 0 || p.n == 0) return;  // an empty matrix: nothing to do
  if (!p.x) fail(name + ": x is a null pointer");
  if (!p.out) fail(name + ": out is a null pointer");
  check_element_aligned(name, "x", p.x, p.in);
  check_element_aligned(name, "out", p.out, p.out_type);
}

}  // namespace flopline::kernels
