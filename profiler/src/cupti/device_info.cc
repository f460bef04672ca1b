#include "device_info.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>

namespace flopline::cupti {
namespace {

struct Driver {
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*get_uuid)(CUuuid*, CUdevice) = nullptr;
  bool ok() const { return device_get && get_attribute && get_name && total_mem; }
};

template <class F>
void load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    // RTLD_NOLOAD: only the driver the program already uses; never load one ourselves.
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr) return r;
    load(lib, "cuDeviceGet", r.device_get);
    load(lib, "cuDeviceGetAttribute", r.get_attribute);
    load(lib, "cuDeviceGetName", r.get_name);
    load(lib, "cuDeviceTotalMem_v2", r.total_mem);
    load(lib, "cuDeviceGetUuid_v2", r.get_uuid);
    if (r.get_uuid == nullptr) load(lib, "cuDeviceGetUuid", r.get_uuid);
    return r;
  }();
  return d;
}

int attribute(const Driver& d, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (d.get_attribute(&v, a, dev) != CUDA_SUCCESS) return 0;
  return v;
}

}  // namespace

std::optional<capture::DeviceInfo> query_device(std::uint32_t ordinal) {
  const Driver& d = driver();
  if (!d.ok()) return std::nullopt;
  CUdevice dev = 0;
  if (d.device_get(&dev, static_cast<int>(ordinal)) != CUDA_SUCCESS) return std::nullopt;
  capture::DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if (d.get_name(name, sizeof name - 1, dev) == CUDA_SUCCESS) info.name = name;
  info.sm_count = attribute(d, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.compute_major = attribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.compute_minor = attribute(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.clock_khz = attribute(d, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attribute(d, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_width = attribute(d, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  size_t total = 0;
  if (d.total_mem(&total, dev) == CUDA_SUCCESS) info.total_memory = total;
  info.warp_size = attribute(d, dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  if (info.warp_size <= 0) info.warp_size = 32;
  info.max_warps_per_sm =
      attribute(d, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / info.warp_size;
  info.max_blocks_per_sm = attribute(d, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  info.registers_per_sm = attribute(d, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.registers_per_block = attribute(d, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.shared_memory_per_sm =
      attribute(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info.reserved_shared_memory_per_block =
      attribute(d, dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  return info;
}

std::string device_uuid(std::uint32_t ordinal) {
  const Driver& d = driver();
  if (!d.ok() || d.get_uuid == nullptr) return {};
  CUdevice dev = 0;
  if (d.device_get(&dev, static_cast<int>(ordinal)) != CUDA_SUCCESS) return {};
  CUuuid u{};
  if (d.get_uuid(&u, dev) != CUDA_SUCCESS) return {};
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

}  // namespace flopline::cupti
