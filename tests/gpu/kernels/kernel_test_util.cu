#include "kernel_test_util.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

namespace flopline::kernels::testing {
namespace {

std::uint64_t g_last_seed = 0;

__global__ void matmul_f64_kernel(const double* a, const double* b, double* c, double* magnitude,
                                  long m, long n, long k) {
  const long col = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long row = blockIdx.y * static_cast<long>(blockDim.y) + threadIdx.y;
  if (row >= m || col >= n) return;
  double acc = 0, mag = 0;
  for (long i = 0; i < k; ++i) {
    const double p = a[row * k + i] * b[i * n + col];
    acc += p;
    mag += fabs(p);
  }
  c[row * n + col] = acc;
  magnitude[row * n + col] = mag;
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  FLOPLINE_CUDA_OK(cudaMalloc(&ptr_, bytes ? bytes : 1));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

std::uint64_t last_seed() {
  return g_last_seed;
}

std::vector<double> random_device_values(DeviceBuffer& device, std::int64_t n, DType t, double lo,
                                         double hi) {
  g_last_seed =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (g_last_seed * 0x9E3779B97F4A7C15ull);
  std::mt19937_64 rng(g_last_seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<std::size_t>(n));
  const std::size_t es = dtype_bytes(t);
  if (device.bytes() < static_cast<std::size_t>(n) * es)
    device = DeviceBuffer(static_cast<std::size_t>(n) * es);
  if (es == 4) {
    std::vector<float> host(values.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = static_cast<float>(dist(rng));
      if (t == DType::tf32) host[i] = round_to_tf32(host[i]);
      values[i] = host[i];
    }
    FLOPLINE_CUDA_OK(
        cudaMemcpy(device.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  } else {
    std::vector<unsigned short> host(values.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      const float f = static_cast<float>(dist(rng));
      if (t == DType::bf16) {
        const __nv_bfloat16 h = __float2bfloat16(f);
        values[i] = static_cast<double>(__bfloat162float(h));
        host[i] = *reinterpret_cast<const unsigned short*>(&h);
      } else {
        const __half h = __float2half(f);
        values[i] = static_cast<double>(__half2float(h));
        host[i] = *reinterpret_cast<const unsigned short*>(&h);
      }
    }
    FLOPLINE_CUDA_OK(
        cudaMemcpy(device.get(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  }
  return values;
}

void poison_nan(const DeviceBuffer& buffer) {
  FLOPLINE_CUDA_OK(cudaMemset(buffer.get(), 0xFF, buffer.bytes()));
}

std::vector<double> download(const DeviceBuffer& buffer, std::int64_t n, DType t) {
  std::vector<double> out(static_cast<std::size_t>(n));
  if (dtype_bytes(t) == 4) {
    std::vector<float> host(out.size());
    FLOPLINE_CUDA_OK(
        cudaMemcpy(host.data(), buffer.get(), host.size() * 4, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = host[i];
  } else {
    std::vector<unsigned short> host(out.size());
    FLOPLINE_CUDA_OK(
        cudaMemcpy(host.data(), buffer.get(), host.size() * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (t == DType::bf16) {
        out[i] = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(&host[i]));
      } else {
        out[i] = __half2float(*reinterpret_cast<const __half*>(&host[i]));
      }
    }
  }
  return out;
}

MatmulReference reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 std::int64_t m, std::int64_t n, std::int64_t k) {
  DeviceBuffer da(a.size() * 8), db(b.size() * 8), dc(static_cast<std::size_t>(m * n) * 8);
  DeviceBuffer dmag(static_cast<std::size_t>(m * n) * 8);
  FLOPLINE_CUDA_OK(cudaMemcpy(da.get(), a.data(), a.size() * 8, cudaMemcpyHostToDevice));
  FLOPLINE_CUDA_OK(cudaMemcpy(db.get(), b.data(), b.size() * 8, cudaMemcpyHostToDevice));
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((m + 7) / 8));
  matmul_f64_kernel<<<grid, block>>>(
      static_cast<const double*>(da.get()), static_cast<const double*>(db.get()),
      static_cast<double*>(dc.get()), static_cast<double*>(dmag.get()), m, n, k);
  FLOPLINE_CUDA_OK(cudaGetLastError());
  MatmulReference r;
  r.c.resize(static_cast<std::size_t>(m * n));
  r.magnitude.resize(r.c.size());
  FLOPLINE_CUDA_OK(cudaMemcpy(r.c.data(), dc.get(), r.c.size() * 8, cudaMemcpyDeviceToHost));
  FLOPLINE_CUDA_OK(
      cudaMemcpy(r.magnitude.data(), dmag.get(), r.c.size() * 8, cudaMemcpyDeviceToHost));
  return r;
}

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return std::numeric_limits<double>::infinity();
    const double d = out[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

int device_arch() {
  int dev = 0, major = 0, minor = 0;
  FLOPLINE_CUDA_OK(cudaGetDevice(&dev));
  FLOPLINE_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  FLOPLINE_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

}  // namespace flopline::kernels::testing
