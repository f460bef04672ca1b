// FLOP counts from the NVTX ranges PyTorch pushes under
// torch.autograd.profiler.emit_nvtx(record_shapes=True). PyTorch (2.11, read from a
// real run) names each operator range like
//
//   aten::addmm, seq = 1, op_id = 2, sizes = [[32], [128, 64], [64, 32], [], []],
//       input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]
//
// where every part after the operator name is optional: "seq" only for operators
// recorded by autograd, "op_id" and "input_op_ids" only in newer PyTorch versions,
// "sizes" only with record_shapes. "sizes" has one entry per operator input: the tensor's shape, or
// [] for a non-tensor argument, an undefined tensor or a 0-d tensor. Dtypes are not written, so
// byte counts are never derived from these names.
//
// FLOPs and bytes come from the shared formulas of flopline/trace/torch_ops.h.
//
// A convolution's output size depends on stride, padding and dilation, which the names
// do not carry (they are int lists: "[]"). flopline does not assume them. It learns
// the output shape from the operator that consumed the output: its "input_op_ids"
// entry (op_id, 0) sits at the same position as that input's shape in its "sizes".
// Nested convolution ranges of one call (conv2d > convolution > _convolution >
// cudnn_convolution, same input and weight shapes, one inside the other on a thread)
// share the output shape found for any of them. A convolution whose output no recorded
// operator consumed gets no FLOPs. Transposed convolutions are not counted (their
// weight layout differs and the names do not say which one ran).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/torch_ops.h"
#include "flopline/trace/types.h"

namespace flopline::capture {

using trace::is_torch_convolution;
using trace::Shape;
using trace::torch_op_bytes;
using trace::torch_op_flops;
using trace::torch_op_output_shape;

struct TorchOpName {
  std::string_view op;  // "aten::mm", "autograd::engine::evaluate_function: MmBackward0"
  std::optional<std::int64_t> seq;
  std::optional<std::uint64_t> op_id;
  bool has_sizes = false;
  // One entry per input; nothing for an entry that was not a flat list of integers.
  std::vector<std::optional<Shape>> sizes;
  std::string_view sizes_text;  // "[[128, 64], [64, 32]]" as written
  // (producer op_id, output index) per input; (0, -1) when unknown.
  std::vector<std::pair<std::uint64_t, std::int64_t>> input_op_ids;
  bool has_input_op_ids = false;
};

// Nothing when `message` is not in that form (a plain message, or a malformed one).
std::optional<TorchOpName> parse_torch_nvtx_name(std::string_view message);

// One NVTX range as the cross-range pass needs it.
struct TorchRangeInput {
  std::string_view message;
  std::uint32_t thread_id = 0;
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
};

struct TorchRangeCounts {
  bool parsed = false;  // the message was an emit_nvtx name
  std::optional<double> flops;
  std::optional<Shape> output;  // known output shape, when found
};

// Parses every range, finds convolution output shapes through the consumers' input_op_ids
// (see the file comment), and returns the FLOPs of each range, in input order. op_ids are
// unique within one process, so call this once per process.
std::vector<TorchRangeCounts> torch_range_counts(std::span<const TorchRangeInput> ranges);

// "[[2, 16, 16, 16]]"-style text of a shape, for args.
std::string shape_text(const Shape& s);

}  // namespace flopline::capture
