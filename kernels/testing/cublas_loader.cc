#include "cublas_loader.h"

#include <dlfcn.h>

#include <string>

namespace flopline::kernels::testing {
namespace {

// The few cuBLAS declarations used, with the ABI values from cublas_api.h / library_types.h
// (stable across CUDA 11-13), so no cuBLAS header or library is needed at build time.
using Status = int;
constexpr int kOpN = 0;                           // CUBLAS_OP_N
constexpr int kR32F = 0, kR16F = 2, kR16BF = 14;  // cudaDataType
constexpr int kComputeF32 = 68;                   // CUBLAS_COMPUTE_32F
constexpr int kComputeF32FastTF32 = 77;           // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kGemmDefault = -1;                  // CUBLAS_GEMM_DEFAULT
constexpr int kGemmDefaultTensorOp = 99;

int data_type(DType t) {
  switch (t) {
    case DType::bf16:
      return kR16BF;
    case DType::f16:
      return kR16F;
    default:
      return kR32F;
  }
}

}  // namespace

struct Cublas::Fns {
  Status (*create)(void**) = nullptr;
  Status (*destroy)(void*) = nullptr;
  Status (*set_stream)(void*, cudaStream_t) = nullptr;
  Status (*gemm_ex)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*,
                    int, int, const void*, void*, int, int, int, int) = nullptr;
};

Cublas::Cublas() {
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    lib_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib_) break;
  }
  if (!lib_) {
    error_ = std::string("cuBLAS not found (libcublas.so.13/12): ") + dlerror();
    return;
  }
  fns_ = new Fns;
  fns_->create = reinterpret_cast<decltype(fns_->create)>(dlsym(lib_, "cublasCreate_v2"));
  fns_->destroy = reinterpret_cast<decltype(fns_->destroy)>(dlsym(lib_, "cublasDestroy_v2"));
  fns_->set_stream =
      reinterpret_cast<decltype(fns_->set_stream)>(dlsym(lib_, "cublasSetStream_v2"));
  fns_->gemm_ex = reinterpret_cast<decltype(fns_->gemm_ex)>(dlsym(lib_, "cublasGemmEx"));
  if (!fns_->create || !fns_->destroy || !fns_->set_stream || !fns_->gemm_ex) {
    error_ = "cuBLAS lacks cublasCreate_v2/cublasGemmEx";
    return;
  }
  void* h = nullptr;
  const Status s = fns_->create(&h);
  if (s != 0) {
    error_ = "cublasCreate failed with status " + std::to_string(s);
    return;
  }
  handle_ = h;
}

Cublas::~Cublas() {
  if (handle_) fns_->destroy(handle_);
  delete fns_;
  if (lib_) dlclose(lib_);
}

bool Cublas::matmul(const void* a, const void* b, void* c, long m, long n, long k, DType in,
                    DType out, cudaStream_t stream) {
  if (!ok()) return false;
  fns_->set_stream(handle_, stream);
  const float alpha = 1.0f, beta = 0.0f;
  const int compute = in == DType::tf32 ? kComputeF32FastTF32 : kComputeF32;
  const int algo = in == DType::f32 ? kGemmDefault : kGemmDefaultTensorOp;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands and m/n.
  const Status s = fns_->gemm_ex(handle_, kOpN, kOpN, static_cast<int>(n), static_cast<int>(m),
                                 static_cast<int>(k), &alpha, b, data_type(in), static_cast<int>(n),
                                 a, data_type(in), static_cast<int>(k), &beta, c, data_type(out),
                                 static_cast<int>(n), compute, algo);
  if (s != 0) {
    error_ = "cublasGemmEx failed with status " + std::to_string(s);
    return false;
  }
  return true;
}

}  // namespace flopline::kernels::testing
