// Per-element error bounds for the kernels' outputs against a float64 reference, derived
// from the precision of the inputs, the fp32 accumulation and the output type. Host code
// only (no CUDA): the GPU tests check the kernels with it, and a CPU unit test
// (tests/unit/test_error_bounds.cc) checks that it passes faithful fp32 results and fails
// corrupted ones (a zeroed tile, a dropped k tail, softmax rows replaced by a uniform
// distribution).
//
// Matmul, element (i, j), with S = sum_k |a_ik| |b_kj| (the reference's magnitudes):
//   |C - C_ref| <= u_out |C_ref| + (u_in + 1.5 k 2^-23) S
// u_out: one ulp of the output type relative (the fp32 result, then its rounding);
// u_in: 0 where the inputs are exact in the precision the kernel multiplies in (bf16,
// fp16, fp32, tf32-rounded fp32: products of two are then exact in fp32), 2^-9 for fp32
// values that tf32 rounds or truncates (2^-10 each operand); 1.5 k 2^-23: k fp32 additions
// that may truncate rather than round (tensor cores align and truncate), each off by at
// most an ulp of a partial sum, itself at most S, plus a normalization per block of at
// least four products.
//
// Softmax of such scores over a line (a row or a column), with D the largest score bound
// of the line: a score error d_i moves p_i by the factor exp(d_i) / sum_j p_j exp(d_j),
// within exp(+-2D); then the fp32 exp (2^-21), its argument (the scores' size times
// 2^-22), the line's sum (its length times 2^-24), the output's rounding, and an absolute
// floor for probabilities that flush to zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flopline/kernels/types.h"

namespace flopline::kernels::testing {

// C = A x B in float64 with each element's magnitude sum_k |a_ik| |b_kj|.
struct MatmulReference {
  std::vector<double> c, magnitude;
};
// On the host (the GPU tests make the same on the GPU, reference_matmul).
MatmulReference reference_matmul_host(const std::vector<double>& a, const std::vector<double>& b,
                                      std::int64_t m, std::int64_t n, std::int64_t k);

// softmax over rows or columns of a row-major m x n matrix, in float64.
std::vector<double> reference_softmax(const std::vector<double>& s, std::int64_t m, std::int64_t n,
                                      bool rows);

// Per-element bounds of a matmul's output stored as `out`; inputs_exact: see above.
std::vector<double> matmul_bounds(const MatmulReference& ref, std::int64_t k, DType out,
                                  bool inputs_exact);

// Per-element bounds of softmax(scores) stored as `out`, given the exact softmax p_ref of
// the reference scores and the scores' own bounds (matmul_bounds with out = fp32).
// output_roundings: 2 for a kernel that stores the unnormalized exps in `out` and rescales
// them there (each store rounds to `out`), else 1.
std::vector<double> softmax_bounds(const std::vector<double>& p_ref,
                                   const std::vector<double>& scores,
                                   const std::vector<double>& score_bounds, std::int64_t m,
                                   std::int64_t n, bool rows, DType out, int output_roundings = 1);

// The elements of an m x n result outside their bounds (a NaN is outside): how many, and
// for a failure message the first few and the worst, with their row and column.
struct BoundReport {
  std::size_t outside = 0;
  std::string detail;
  bool ok() const { return outside == 0; }
};
BoundReport check_bounds(const std::vector<double>& got, const std::vector<double>& ref,
                         const std::vector<double>& bound, std::int64_t n);

// Each line of a softmax sums to 1 within the sum of its elements' bounds: the first line
// that does not, or "".
std::string check_line_sums(const std::vector<double>& got, const std::vector<double>& bound,
                            std::int64_t m, std::int64_t n, bool rows);

// Host roundings to the kernels' storage types (round to nearest; tf32 ties away from
// zero, as cvt.rna).
float round_to_bf16(float x);
float round_to_tf32(float x);

}  // namespace flopline::kernels::testing
