// ArgStore: all args objects of a trace as JSON text in one arena (one allocation per
// growth, not one per event). ArgsBuilder: compact JSON object text for capture/tests.
#include "flopline/trace/args.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "flopline/trace/json_text.h"

namespace flopline::trace {

ArgsId ArgStore::add_entry(std::uint64_t offset, std::uint64_t length, bool in_source) {
  // kNoArgs is reserved; offsets have 40 bits. Both limits are far beyond any real
  // trace (4 billion args objects, 1 TiB of args text or of JSON).
  if (entries_.size() >= kNoArgs) throw std::length_error("more than 2^32-1 args objects");
  if (offset >> (64 - kOffsetShift) != 0) throw std::length_error("args offset beyond 1 TiB");
  if (length > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("args object larger than 4 GiB");
  const auto id = static_cast<ArgsId>(entries_.size());
  std::uint64_t len_bits = length;
  if (length >= kLongLength) {
    long_lengths_.push_back(LongLength{id, static_cast<std::uint32_t>(length)});
    len_bits = kLongLength;
  }
  entries_.push_back(offset << kOffsetShift | len_bits << kLengthShift |
                     (in_source ? kInSource : 0));
  return id;
}

std::uint32_t ArgStore::long_length(ArgsId id) const {
  const auto it = std::lower_bound(long_lengths_.begin(), long_lengths_.end(), id,
                                   [](const LongLength& l, ArgsId v) { return l.id < v; });
  return it != long_lengths_.end() && it->id == id ? it->length : 0;
}

ArgsId ArgStore::add_json(std::string_view object_text) {
  const ArgsId id = add_entry(arena_.size(), object_text.size(), false);
  arena_.insert(arena_.end(), object_text.begin(), object_text.end());
  return id;
}

ArgsId ArgStore::add_location(std::uint64_t offset, std::uint32_t length) {
  ++locations_;
  return add_entry(offset, length, true);
}

void ArgsBuilder::key(std::string_view k) {
  if (finished_) {  // adding after finish(): reopen the object
    text_.pop_back();
    if (text_.size() == 1) text_.clear();
    finished_ = false;
  }
  text_.push_back(text_.empty() ? '{' : ',');
  append_json_string(text_, k);
  text_.push_back(':');
}

ArgsBuilder& ArgsBuilder::add(std::string_view k, std::int64_t value) {
  key(k);
  append_int(text_, value);
  return *this;
}

ArgsBuilder& ArgsBuilder::add_uint(std::string_view k, std::uint64_t value) {
  key(k);
  append_uint(text_, value);
  return *this;
}

ArgsBuilder& ArgsBuilder::add(std::string_view k, double value) {
  key(k);
  append_double(text_, value);
  return *this;
}

ArgsBuilder& ArgsBuilder::add(std::string_view k, std::string_view value) {
  key(k);
  append_json_string(text_, value);
  return *this;
}

ArgsBuilder& ArgsBuilder::add_bool(std::string_view k, bool value) {
  key(k);
  text_ += value ? "true" : "false";
  return *this;
}

ArgsBuilder& ArgsBuilder::add_ints(std::string_view k, std::initializer_list<std::int64_t> values) {
  key(k);
  text_.push_back('[');
  bool first = true;
  for (std::int64_t v : values) {
    if (!first) text_.push_back(',');
    first = false;
    append_int(text_, v);
  }
  text_.push_back(']');
  return *this;
}

ArgsBuilder& ArgsBuilder::add_raw(std::string_view k, std::string_view json) {
  key(k);
  text_.append(json);
  return *this;
}

std::string_view ArgsBuilder::finish() {
  if (!finished_) {
    if (text_.empty()) text_.push_back('{');
    text_.push_back('}');
    finished_ = true;
  }
  return text_;
}

}  // namespace flopline::trace
