// FLOP and byte counts of PyTorch operators from their input shapes: one set of
// formulas for every place that knows shapes (the emit_nvtx range names the capture
// parses, and the "Input Dims" of a torch.profiler trace's cpu_op).
//
// FLOPs (multiply and add counted as two):
//   aten::mm       [M,K] x [K,N]                    2*M*N*K
//   aten::addmm    bias, [M,K], [K,N]               2*M*N*K + M*N
//   aten::bmm      [B,M,K] x [B,K,N]                2*B*M*N*K
//   aten::baddbmm  bias, [B,M,K], [B,K,N]           2*B*M*N*K + B*M*N
//   aten::matmul   torch.matmul's shapes: [K]x[K] 2*K; [M,K]x[K] 2*M*K; [K]x[K,N] 2*K*N;
//                  [..., M, K] x [..., K, N] 2*batch*M*N*K, batch = the broadcast
//                  product of the leading dims
//   aten::linear   x [..., I], w [O, I], bias?      2*batch*I*O (+ batch*O with a bias),
//                  batch = product of x's leading dims
//   convolutions   x [N, Cin, spatial...], w [Cout, Cin/groups, kernel...]
//                  2*N*Cout*prod(out spatial)*(Cin/groups)*prod(kernel)
//                  (+ N*Cout*prod(out spatial) with a bias)
//     (aten::conv1d/2d/3d, aten::convolution, aten::_convolution, aten::cudnn_convolution)
//   attention      q [..., L, E], k [..., S, E], v [..., S, Ev]
//                  2*batch*L*S*E + 2*batch*L*S*Ev, batch = product of q's leading dims
//                  (the full score matrix: a causal mask is not taken off)
//     (aten::scaled_dot_product_attention and its _flash/_efficient/_cudnn forward kernels)
//
// A convolution's output size depends on stride, padding and dilation; the caller
// passes the output shape (conv_output_shape computes it from those values).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace flopline::trace {

using Shape = std::vector<std::int64_t>;

// FLOPs of one operator from its input shapes (one entry per input: the tensor's
// shape, an empty shape for a non-tensor or 0-d input, nothing for an entry that is
// not a flat list); `output` is the output shape when known (convolutions need it).
// Nothing for other operators or shapes that do not fit.
std::optional<double> torch_op_flops(std::string_view op,
                                     std::span<const std::optional<Shape>> inputs,
                                     const Shape* output = nullptr);

// The output shape of mm, addmm, bmm, baddbmm, matmul, linear and attention, from
// their inputs.
std::optional<Shape> torch_op_output_shape(std::string_view op,
                                           std::span<const std::optional<Shape>> inputs);

// Bytes read and written: the elements of every tensor input and of the output, times
// `element_bytes`. Only when the caller knows the dtype and the output shape.
std::optional<double> torch_op_bytes(std::span<const std::optional<Shape>> inputs,
                                     const Shape& output, std::int32_t element_bytes);

bool is_torch_convolution(std::string_view op);
bool is_torch_attention(std::string_view op);
// Operators torch_op_flops knows.
bool has_torch_flop_formula(std::string_view op);

// A convolution's output shape from its input and weight shapes and its stride,
// padding and dilation (one value, or one per spatial dim) as the operator received
// them. `padding_mode` "same" keeps the input size, "valid" means no padding.
std::optional<Shape> conv_output_shape(const Shape& input, const Shape& weight,
                                       std::span<const std::int64_t> stride,
                                       std::span<const std::int64_t> padding,
                                       std::span<const std::int64_t> dilation,
                                       std::string_view padding_mode = {});

}  // namespace flopline::trace
