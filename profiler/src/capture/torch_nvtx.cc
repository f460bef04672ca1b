// Parsing PyTorch emit_nvtx range names and counting FLOPs; see torch_nvtx.h.
#include "flopline/capture/torch_nvtx.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <unordered_map>

namespace flopline::capture {
namespace {

constexpr std::array<std::string_view, 4> kKeys = {"seq", "op_id", "sizes", "input_op_ids"};

// A small cursor over the value text; skips blanks between tokens.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void blanks() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool eat(char c) {
    blanks();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    blanks();
    return i_ < s_.size() && s_[i_] == c;
  }
  template <typename T>
  bool number(T& out) {
    blanks();
    const auto [ptr, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), out);
    if (ec != std::errc()) return false;
    i_ = static_cast<std::size_t>(ptr - s_.data());
    return true;
  }
  // Skips one balanced [...] group (its brackets included).
  bool skip_group() {
    if (!eat('[')) return false;
    int depth = 1;
    while (i_ < s_.size() && depth > 0) {
      if (s_[i_] == '[') ++depth;
      if (s_[i_] == ']') --depth;
      ++i_;
    }
    return depth == 0;
  }
  bool done() {
    blanks();
    return i_ == s_.size();
  }
  std::size_t pos() const { return i_; }
  void seek(std::size_t p) { i_ = p; }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

// "[[128, 64], [], [[1], [2]]]": a flat inner list of integers is a shape; a list of
// lists is kept as an unknown entry; anything else is malformed.
bool parse_sizes(std::string_view text, std::vector<std::optional<Shape>>& out) {
  Cursor c(text);
  if (!c.eat('[')) return false;
  if (c.eat(']')) return c.done();
  do {
    const std::size_t entry = c.pos();
    if (!c.eat('[')) return false;
    if (c.peek('[')) {  // a list of lists: kept as an unknown entry
      c.seek(entry);
      if (!c.skip_group()) return false;
      out.emplace_back(std::nullopt);
      continue;
    }
    Shape shape;
    if (!c.eat(']')) {
      do {
        std::int64_t d = 0;
        if (!c.number(d)) return false;
        shape.push_back(d);
      } while (c.eat(','));
      if (!c.eat(']')) return false;
    }
    out.emplace_back(std::move(shape));
  } while (c.eat(','));
  return c.eat(']') && c.done();
}

// "[(0,-1), (3,0)]"
bool parse_input_op_ids(std::string_view text,
                        std::vector<std::pair<std::uint64_t, std::int64_t>>& out) {
  Cursor c(text);
  if (!c.eat('[')) return false;
  if (c.eat(']')) return c.done();
  do {
    std::uint64_t op = 0;
    std::int64_t nr = 0;
    if (!c.eat('(') || !c.number(op) || !c.eat(',') || !c.number(nr) || !c.eat(')')) return false;
    out.emplace_back(op, nr);
  } while (c.eat(','));
  return c.eat(']') && c.done();
}

// The end of a value starting at `from`: a balanced bracket group, or up to the next ", ".
std::size_t value_end(std::string_view s, std::size_t from) {
  if (from < s.size() && s[from] == '[') {
    int depth = 0;
    for (std::size_t i = from; i < s.size(); ++i) {
      if (s[i] == '[') ++depth;
      if (s[i] == ']' && --depth == 0) return i + 1;
    }
    return std::string_view::npos;
  }
  const std::size_t comma = s.find(", ", from);
  return comma == std::string_view::npos ? s.size() : comma;
}

template <typename T>
bool parse_whole(std::string_view text, T& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::optional<TorchOpName> parse_torch_nvtx_name(std::string_view message) {
  std::size_t first = std::string_view::npos;
  for (std::string_view key : kKeys) {
    std::string marker = ", ";
    marker += key;
    marker += " = ";
    first = std::min(first, message.find(marker));
  }
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  TorchOpName r;
  r.op = message.substr(0, first);
  std::size_t i = first;
  while (i < message.size()) {
    if (message.substr(i, 2) != ", ") return std::nullopt;
    i += 2;
    const std::size_t eq = message.find(" = ", i);
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = message.substr(i, eq - i);
    const std::size_t from = eq + 3;
    const std::size_t end = value_end(message, from);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view value = message.substr(from, end - from);
    if (key == "seq") {
      std::int64_t seq = 0;
      if (!parse_whole(value, seq)) return std::nullopt;
      r.seq = seq;
    } else if (key == "op_id") {
      std::uint64_t id = 0;
      if (!parse_whole(value, id)) return std::nullopt;
      r.op_id = id;
    } else if (key == "sizes") {
      if (!parse_sizes(value, r.sizes)) return std::nullopt;
      r.has_sizes = true;
      r.sizes_text = value;
    } else if (key == "input_op_ids") {
      if (!parse_input_op_ids(value, r.input_op_ids)) return std::nullopt;
      r.has_input_op_ids = true;
    }
    // Other keys a later PyTorch may add are skipped.
    i = end;
  }
  return r;
}

std::vector<TorchRangeCounts> torch_range_counts(std::span<const TorchRangeInput> ranges) {
  const std::size_t n = ranges.size();
  std::vector<std::optional<TorchOpName>> names(n);
  std::vector<TorchRangeCounts> out(n);
  std::unordered_map<std::uint64_t, std::size_t> by_op_id;
  for (std::size_t i = 0; i < n; ++i) {
    names[i] = parse_torch_nvtx_name(ranges[i].message);
    if (!names[i]) continue;
    out[i].parsed = true;
    if (names[i]->op_id && *names[i]->op_id != 0) by_op_id.emplace(*names[i]->op_id, i);
    out[i].output = torch_op_output_shape(names[i]->op, names[i]->sizes);
  }
  // Output shapes seen by consumers: input i of a consumer was output 0 of its producer.
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = names[i];
    if (!c || !c->has_input_op_ids || c->input_op_ids.size() != c->sizes.size()) continue;
    for (std::size_t k = 0; k < c->sizes.size(); ++k) {
      const auto [producer, output_nr] = c->input_op_ids[k];
      if (producer == 0 || output_nr != 0 || !c->sizes[k] || c->sizes[k]->empty()) continue;
      const auto it = by_op_id.find(producer);
      if (it != by_op_id.end() && !out[it->second].output) out[it->second].output = c->sizes[k];
    }
  }
  // Nested convolution ranges of one call share the output shape.
  std::vector<std::size_t> convs;
  for (std::size_t i = 0; i < n; ++i) {
    if (names[i] && is_torch_convolution(names[i]->op) && names[i]->sizes.size() >= 2)
      convs.push_back(i);
  }
  std::sort(convs.begin(), convs.end(), [&](std::size_t a, std::size_t b) {
    if (ranges[a].thread_id != ranges[b].thread_id)
      return ranges[a].thread_id < ranges[b].thread_id;
    if (ranges[a].start != ranges[b].start) return ranges[a].start < ranges[b].start;
    return ranges[a].end > ranges[b].end;
  });
  auto same_call = [&](std::size_t outer, std::size_t inner) {
    return ranges[inner].thread_id == ranges[outer].thread_id &&
           ranges[inner].end <= ranges[outer].end &&
           names[inner]->sizes[0] == names[outer]->sizes[0] &&
           names[inner]->sizes[1] == names[outer]->sizes[1];
  };
  for (int pass = 0; pass < 2; ++pass) {  // down the nesting, then back up
    for (std::size_t a = 0; a < convs.size(); ++a) {
      for (std::size_t b = a + 1; b < convs.size(); ++b) {
        const std::size_t outer = convs[a];
        const std::size_t inner = convs[b];
        if (ranges[inner].thread_id != ranges[outer].thread_id ||
            ranges[inner].start > ranges[outer].end)
          break;
        if (!same_call(outer, inner)) continue;
        if (out[outer].output && !out[inner].output) out[inner].output = out[outer].output;
        if (out[inner].output && !out[outer].output) out[outer].output = out[inner].output;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!names[i]) continue;
    out[i].flops =
        torch_op_flops(names[i]->op, names[i]->sizes, out[i].output ? &*out[i].output : nullptr);
  }
  return out;
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0) t += ", ";
    t += std::to_string(s[i]);
  }
  t += ']';
  return t;
}

}  // namespace flopline::capture
