// Counts of a torch.profiler cpu_op from its shape args; see torch_op_args.h.
#include "flopline/trace/torch_op_args.h"

#include <array>
#include <charconv>
#include <utility>

#include "flopline/trace/json_value.h"
#include "trace/json_scanner.h"

namespace flopline::trace {
namespace {

// An integer token of the scanner as int64; false for anything else.
bool token_int(const json::Token& t, std::int64_t& out) {
  if (t.kind != json::Kind::kNumber) return false;
  const auto [ptr, ec] = std::from_chars(t.begin, t.end, out);
  return ec == std::errc() && ptr == t.end;
}

// "[[4, 16], [], [[2], [3]]]": a flat list of integers is a shape; anything else is
// kept as an unknown entry. False when the text is not an array.
bool parse_dims(std::string_view text, std::vector<std::optional<Shape>>& out) {
  json::Scanner s(text);
  if (!s.consume('[')) return false;
  bool first = true;
  while (s.next_element(first)) {
    s.skip_ws();
    const char* entry = s.pos();
    std::optional<Shape> shape;
    if (s.consume('[')) {
      shape.emplace();
      bool inner_first = true;
      json::Token t;
      while (s.next_element(inner_first)) {
        if (!s.scan_value(t)) return false;
        std::int64_t v = 0;
        if (!token_int(t, v)) {
          shape.reset();
          break;
        }
        shape->push_back(v);
      }
      if (!shape) {  // not a flat integer list: skip the whole entry
        s.set_pos(entry);
        if (!s.skip_value()) return false;
      }
    } else if (!s.skip_value()) {
      return false;
    }
    if (s.failed()) return false;
    out.push_back(std::move(shape));
  }
  return !s.failed();
}

// ["float", "Scalar", ""] -> the strings; a non-string entry becomes "".
bool parse_strings(std::string_view text, std::vector<std::string>& out) {
  json::Scanner s(text);
  if (!s.consume('[')) return false;
  bool first = true;
  std::string scratch;
  while (s.next_element(first)) {
    json::Token t;
    if (!s.scan_value(t)) return false;
    if (t.kind == json::Kind::kString) {
      out.emplace_back(json::Scanner::string_value(t, scratch));
    } else {
      out.emplace_back();
      if ((t.kind == json::Kind::kObject || t.kind == json::Kind::kArray) && !s.skip_value())
        return false;
    }
  }
  return !s.failed();
}

std::string_view unquote(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return s;
}

const std::string* concrete_at(const TorchOpArgs& a, std::size_t i) {
  return i < a.concrete.size() ? &a.concrete[i] : nullptr;
}

// Where stride, padding and dilation sit among a convolution's inputs, and whether a
// "transposed" flag does.
struct ConvArgPositions {
  std::size_t stride, padding, dilation;
  std::optional<std::size_t> transposed;
};

std::optional<ConvArgPositions> conv_positions(std::string_view op) {
  if (op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d")
    return ConvArgPositions{3, 4, 5, std::nullopt};
  if (op == "aten::convolution" || op == "aten::_convolution") return ConvArgPositions{3, 4, 5, 6};
  if (op == "aten::cudnn_convolution") return ConvArgPositions{3, 2, 4, std::nullopt};
  return std::nullopt;
}

std::optional<Shape> conv_output(std::string_view op, const TorchOpArgs& a) {
  const auto pos = conv_positions(op);
  if (!pos || a.dims.size() < 2 || !a.dims[0] || !a.dims[1]) return std::nullopt;
  if (pos->transposed) {
    const std::string* t = concrete_at(a, *pos->transposed);
    if (t == nullptr || unquote(*t) != "False") return std::nullopt;  // transposed or unknown
  }
  const std::string* stride = concrete_at(a, pos->stride);
  const std::string* padding = concrete_at(a, pos->padding);
  const std::string* dilation = concrete_at(a, pos->dilation);
  if (stride == nullptr || padding == nullptr || dilation == nullptr) return std::nullopt;
  const auto s = parse_int_list_text(*stride);
  const auto d = parse_int_list_text(*dilation);
  if (!s || !d) return std::nullopt;
  const std::string_view mode = unquote(*padding);
  if (mode == "same" || mode == "valid")
    return conv_output_shape(*a.dims[0], *a.dims[1], *s, {}, *d, mode);
  const auto p = parse_int_list_text(*padding);
  if (!p) return std::nullopt;
  return conv_output_shape(*a.dims[0], *a.dims[1], *s, *p, *d);
}

// The dtype of the first tensor input (the first non-empty shape with a dtype).
std::string_view first_tensor_dtype(const TorchOpArgs& a) {
  for (std::size_t i = 0; i < a.dims.size() && i < a.types.size(); ++i) {
    if (a.dims[i] && !a.dims[i]->empty() && torch_dtype_bytes(a.types[i]) > 0) return a.types[i];
  }
  return {};
}

}  // namespace

std::optional<std::vector<std::int64_t>> parse_int_list_text(std::string_view text) {
  text = unquote(text);
  std::vector<std::int64_t> out;
  if (text.empty()) return std::nullopt;
  const bool list = text.front() == '[';
  if (list) {
    if (text.back() != ']') return std::nullopt;
    text = text.substr(1, text.size() - 2);
  }
  while (!text.empty()) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    if (!list || text.front() != ',') return std::nullopt;
    text.remove_prefix(1);
  }
  if (out.empty() || (!list && out.size() != 1)) return std::nullopt;
  return out;
}

std::optional<TorchOpArgs> parse_torch_op_args(std::string_view args_json) {
  const auto dims = json_member(args_json, "Input Dims");
  if (!dims) return std::nullopt;
  TorchOpArgs a;
  if (!parse_dims(*dims, a.dims)) return std::nullopt;
  if (const auto types = json_member(args_json, "Input type")) {
    if (!parse_strings(*types, a.types)) a.types.clear();
  }
  if (const auto concrete = json_member(args_json, "Concrete Inputs")) {
    if (!parse_strings(*concrete, a.concrete)) a.concrete.clear();
  }
  return a;
}

TorchOpCounts torch_op_counts(std::string_view op, const TorchOpArgs& args) {
  TorchOpCounts c;
  c.output =
      is_torch_convolution(op) ? conv_output(op, args) : torch_op_output_shape(op, args.dims);
  c.flops = torch_op_flops(op, args.dims, c.output ? &*c.output : nullptr);
  const std::string_view dtype = first_tensor_dtype(args);
  c.precision = std::string(precision_of_torch_dtype(dtype));
  if (c.output) c.bytes = torch_op_bytes(args.dims, *c.output, torch_dtype_bytes(dtype));
  return c;
}

std::string_view precision_of_torch_dtype(std::string_view dtype) {
  if (dtype == "float") return "fp32";
  if (dtype == "c10::BFloat16") return "bf16";
  if (dtype == "c10::Half") return "fp16";
  if (dtype == "double") return "fp64";
  if (dtype.starts_with("c10::Float8_")) return "fp8";
  return {};
}

std::int32_t torch_dtype_bytes(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, std::int32_t>, 16> kSizes{{
      {"float", 4},
      {"double", 8},
      {"c10::Half", 2},
      {"c10::BFloat16", 2},
      {"long int", 8},
      {"long", 8},
      {"int", 4},
      {"short int", 2},
      {"short", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::complex<c10::Half>", 4},
      {"unsigned int", 4},
  }};
  for (const auto& [name, bytes] : kSizes) {
    if (dtype == name) return bytes;
  }
  if (dtype.starts_with("c10::Float8_")) return 1;
  return 0;
}

}  // namespace flopline::trace
