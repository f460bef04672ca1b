// ArgStore: all args objects of a trace as JSON text in one arena (one allocation per
// growth, not one per event). ArgsBuilder: compact JSON object text for capture/tests.
#include "flopline/trace/args.h"

#include <limits>
#include <stdexcept>

#include "flopline/trace/json_text.h"

namespace flopline::trace {

ArgsId ArgStore::add_json(std::string_view object_text) {
  // Entry::length is 32 bits and kNoArgs is reserved; both limits are far beyond
  // any real trace (4 GiB of one args object, 4 billion args objects).
  if (object_text.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("args object larger than 4 GiB");
  }
  if (entries_.size() >= kNoArgs) throw std::length_error("more than 2^32-1 args objects");
  entries_.push_back(Entry{arena_.size(), static_cast<std::uint32_t>(object_text.size())});
  arena_.insert(arena_.end(), object_text.begin(), object_text.end());
  return static_cast<ArgsId>(entries_.size() - 1);
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
