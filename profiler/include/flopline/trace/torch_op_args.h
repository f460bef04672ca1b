// FLOPs, bytes and precision of one torch.profiler (Kineto) cpu_op from the args that
// record_shapes=True writes on it:
//
//   "Input Dims":      [[4, 16, 32, 32], [32, 16, 3, 3], [32], [], [], [], []]
//   "Input type":      ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList",
//   "Scalar"] "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]
//
// one entry per operator input. A tensor list is a list of shapes (kept as an unknown
// entry); dtypes are c10's names ("float", "c10::BFloat16"); "Concrete Inputs" (newer
// PyTorch) holds the values of the non-tensor inputs as text. The FLOP formulas are
// torch_ops.h's. A convolution's output shape comes from its stride, padding and
// dilation in "Concrete Inputs"; without them it gets no FLOPs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/torch_ops.h"

namespace flopline::trace {

struct TorchOpArgs {
  std::vector<std::optional<Shape>> dims;  // "Input Dims"
  std::vector<std::string> types;          // "Input type"
  std::vector<std::string> concrete;       // "Concrete Inputs" (empty when absent)
};

// Nothing when the args object has no "Input Dims" array.
std::optional<TorchOpArgs> parse_torch_op_args(std::string_view args_json);

struct TorchOpCounts {
  std::optional<double> flops;
  std::optional<double> bytes;  // inputs + output, at the first tensor input's dtype size
  std::string precision;        // "fp32", "bf16"...: the first floating tensor input's dtype
  std::optional<Shape> output;
};

// The counts of operator `op` (its name, "aten::mm") with these args.
TorchOpCounts torch_op_counts(std::string_view op, const TorchOpArgs& args);

// A c10 dtype name as the peak table names precisions: "float" -> "fp32",
// "c10::BFloat16" -> "bf16", "c10::Half" -> "fp16", "double" -> "fp64",
// "c10::Float8_e4m3fn" (and the other fp8 encodings) -> "fp8"; "" for anything else.
std::string_view precision_of_torch_dtype(std::string_view dtype);
// Bytes per element of a c10 dtype name; 0 when unknown.
std::int32_t torch_dtype_bytes(std::string_view dtype);
// "[1, 1]" or "1" (as "Concrete Inputs" writes int lists and ints) -> the values.
std::optional<std::vector<std::int64_t>> parse_int_list_text(std::string_view text);

}  // namespace flopline::trace
