// Hopper building blocks of the sm90 kernels, as thin inline-PTX wrappers: mbarriers,
// TMA tile loads, wgmma fences and shared-memory matrix descriptors, register
// reallocation. Only compiled for sm_90a (FLOPLINE_SM90A), elsewhere the kernels are empty.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FLOPLINE_SM90A 1
#endif

namespace flopline::kernels::sm90 {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#ifdef FLOPLINE_SM90A

// --- mbarrier: the producer/consumer handshake of each pipeline stage ---------------
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes));
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)));
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned phase) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(phase));
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// --- TMA: one 2-D tile from global to shared memory, completing on an mbarrier ------
__device__ __forceinline__ void tma_load_2d(void* dst, const void* tensor_map, std::uint64_t* bar,
                                            int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_addr(dst)),
      "l"(tensor_map), "r"(smem_addr(bar)), "r"(inner), "r"(outer)
      : "memory");
}
// One 2-D tile from shared to global memory (TMA store; clipped at the matrix edges),
// tracked as a bulk group of the issuing thread.
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, const void* src, int inner,
                                             int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   tensor_map),
               "r"(smem_addr(src)), "r"(inner), "r"(outer)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Until at most N of this thread's bulk groups are still reading their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Until at most N of this thread's bulk groups are incomplete (writes done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// Makes this thread's shared-memory writes visible to the async proxy (a TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// Orders this thread's completed TMA stores (async proxy) before its later generic
// accesses to global memory, such as the release that tells other threads to read them.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
__device__ __forceinline__ void st_shared_u32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map) : "memory");
}

// --- wgmma ordering ------------------------------------------------------------------
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across the async wgmma.
template <int R>
__device__ __forceinline__ void fence_registers(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// --- register reallocation between the producer and the consumer warpgroups ----------
template <int Regs>
__device__ __forceinline__ void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

// --- named barriers between the two consumer warpgroups -----------------------------
// bar.sync waits until `threads` threads have arrived at barrier `id` (the caller's warps
// included); bar.arrive counts the caller's warps in without waiting. Barrier 0 is
// __syncthreads(). Every user of a named barrier takes its id from here, so that the
// pieces one kernel is built of never share one; "+ consumer" ids take two (consumer 0
// and 1).
enum NamedBarrier : int {
  kBarrierConsumerTurn = 1,  // + consumer: B-resident ping-pong, the consumer's turn for its k loop
  kBarrierRowExchange = 3,   // + consumer: cluster rows' and group rows' exchange of row statistics
  kBarrierStaging = 5,       // + consumer: a consumer's staged output (both cores)
  kBarrierSwappedRows = 7,   // both consumers: the swapped core's row statistics
  kBarrierRescale = 8,       // the in-launch rescale's three producer warps
};
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// --- thread-block clusters: ranks, distributed shared memory, cluster barriers --------
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_size() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// Every thread of every CTA of the cluster (warps converged).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
// The address of the same shared-memory location in CTA `rank` of the cluster.
__device__ __forceinline__ std::uint32_t cluster_map(std::uint32_t local, unsigned rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
// Stores two floats into another CTA's shared memory and counts their 8 bytes on that
// CTA's mbarrier (complete-tx): the receiver waits on its own barrier, no flag to poll.
__device__ __forceinline__ void cluster_store_async(std::uint32_t remote, float a, float b,
                                                    std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
          remote),
      "f"(a), "f"(b), "r"(remote_bar)
      : "memory");
}
// GPU-scope release increment and acquire load of a counter that CTAs use to publish
// results to each other through global memory.
__device__ __forceinline__ void red_add_release_gpu(unsigned* counter, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(counter), "r"(v) : "memory");
}
// Lets a launch that depends on this one (programmatic stream serialization) start
// once every CTA of this one has called it or exited.
__device__ __forceinline__ void griddep_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned* counter) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
  return v;
}
// Two floats from this CTA's shared memory by shared address (a generic load through a
// pointer the compiler cannot place in shared memory takes the long global path).
__device__ __forceinline__ float2 ld_shared_pair(std::uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}

#endif  // FLOPLINE_SM90A

// --- shared-memory matrix descriptor (PTX "matrix-descriptor-encode") ---------------
// 128-byte swizzle. K-major operands: 8-row groups 1024 bytes apart (SBO); LBO unused.
// MN-major operands: 64-element (128-byte) column blocks `mn_block_bytes` apart (LBO),
// 8-row groups along K 1024 bytes apart (SBO).
__device__ __forceinline__ std::uint64_t encode14(std::uint32_t bytes) {
  return (bytes & 0x3FFFF) >> 4;
}

__device__ __forceinline__ std::uint64_t desc_k_major_sw128(std::uint32_t smem) {
  return encode14(smem) | (encode14(16) << 16) | (encode14(1024) << 32) | (1ull << 62);
}
__device__ __forceinline__ std::uint64_t desc_mn_major_sw128(std::uint32_t smem,
                                                             std::uint32_t mn_block_bytes) {
  return encode14(smem) | (encode14(mn_block_bytes) << 16) | (encode14(1024) << 32) | (1ull << 62);
}

}  // namespace flopline::kernels::sm90
