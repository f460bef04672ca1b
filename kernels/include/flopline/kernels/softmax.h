// softmax(A x B) over rows (dim -1) or over columns (dim 0), fused with the matmul, and a
// standalone softmax (the unfused baseline). See docs/KERNELS.md for the schemes:
//  - rows with n <= 2048 (4096 where the device runs clusters of 16 CTAs), on Hopper: one
//    sweep of the wgmma matmul, one row of 256-column tiles per thread-block cluster; the
//    CTAs exchange their rows' (max, sum) through distributed shared memory and write
//    the normalized output from registers.
//  - problems of few tiles (at most half as many 256x128 tiles as SMs) on Hopper: k split
//    into ranges, each on CTAs of its own; the partial scores go to scratch memory and
//    one pass adds them and writes the softmax.
//  - small problems (every 64x64 tile of the scores gets a resident CTA): one cooperative
//    launch; each CTA keeps its tile in registers across grid-wide barriers while the
//    row (column) statistics are exchanged.
//  - k small (the matmul is cheap next to one pass over the scores): two sweeps of the
//    matmul, the first keeps only per-row (per-column) max and sum, the second writes
//    the normalized output; the score matrix never goes to memory.
//  - otherwise: the matmul epilogue writes exp(s - tile max) and each tile's (max, sum);
//    a light pass rescales the output in place with the combined statistics.
// Inputs tf32 (fp32 storage), bf16 or fp16; output fp32 or the input's 16-bit type.
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"

namespace flopline::kernels {

// How matmul_softmax computes (docs/KERNELS.md, "Fused matmul+softmax").
enum class SoftmaxScheme {
  automatic,   // split_k, one_launch for small problems, then cluster_rows, group_rows
               // or sweeps on Hopper, unfused otherwise
  one_launch,  // sm_80+, up to one resident CTA per 64x64 tile: one cooperative launch,
               // the scores stay in registers
  sweeps,      // Hopper (sm90 path): wgmma sweeps with the softmax in their epilogue
  cluster_rows,  // Hopper (sm90 path), rows over at most 16 column tiles of 256 (n <= 4096,
                 // above 2048 where the device runs clusters of 16): one wgmma sweep, the
                 // CTAs of a cluster share a row's statistics, only the output is written
  group_rows,  // Hopper (sm90 path), rows over at most one column tile of 256 per SM: as
               // cluster_rows, but any tiles_n CTAs of a cooperative launch form a group
               // and share the statistics through L2 (all SMs usable, no cluster limit)
  split_k,     // Hopper (sm90 path), problems of few tiles (at most half as many 256x128
               // tiles as SMs): k cut into 2-8 ranges, each (tile, range) on its own
               // CTA; the partial scores go to scratch memory and one pass adds them and
               // writes the softmax (rows or columns)
  unfused,     // the matmul into scratch memory, then the standalone softmax
};
const char* softmax_scheme_name(SoftmaxScheme s);

struct MatmulSoftmaxOptions {
  SoftmaxDim dim = SoftmaxDim::rows;
  MatmulPath path = MatmulPath::automatic;  // the matmul path of the sweeps and unfused schemes
  SoftmaxScheme scheme = SoftmaxScheme::automatic;  // a scheme the problem cannot take throws KernelError
  cudaStream_t stream = nullptr;
  bool range = true;
};

void matmul_softmax(const MatmulProblem& p, const MatmulSoftmaxOptions& options = {});

// out = softmax(x) over rows or columns of an m x n row-major matrix (fp32 math);
// SoftmaxProblem and its checks are in checks.h. Checks the arguments (KernelError),
// then launches asynchronously on the stream; launch failures throw CudaError. Rows: a
// row of up to 16384 elements is read once into registers (one pass over memory);
// longer rows are read twice. Columns: per-column running max and sum over row chunks,
// then a second read that writes the output (softmax_cols.cu).
void softmax(const SoftmaxProblem& p, SoftmaxDim dim, cudaStream_t stream = nullptr, bool range = true);

}  // namespace flopline::kernels
