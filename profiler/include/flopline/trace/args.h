// Event arguments, kept apart from the hot slice struct.
//
// Each args object is stored as compact JSON object text ("{...}") in one arena.
// The reader stores the text as it appeared in the file (validated); code that makes
// events (capture, tests) builds the text with ArgsBuilder, which escapes correctly.
// Lookups parse lazily (see json_value.h), because only a few events are ever
// inspected one by one (tooltips, details) while analysis reads a few known keys.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "flopline/trace/types.h"

namespace flopline::trace {

class ArgStore {
 public:
  // Stores the text of one JSON object. The caller guarantees it is a JSON object.
  ArgsId add_json(std::string_view object_text);
  // Records where an args object lies in the trace's (decompressed) JSON text instead
  // of its text: what the reader does with ReadOptions::args = ArgsMode::kOnDemand.
  // json() gives "{}" for such an entry; the viewer reads the text back from the file.
  ArgsId add_location(std::uint64_t offset, std::uint32_t length);
  bool is_location(ArgsId id) const {
    return id < entries_.size() && (entries_[id] & kInSource) != 0;
  }
  // How many entries are locations: args that only the source file holds.
  std::size_t location_count() const { return locations_; }
  // Byte offset and length in the JSON text of a location entry.
  std::pair<std::uint64_t, std::uint32_t> location(ArgsId id) const {
    return {entries_[id] >> kOffsetShift, length_of(id)};
  }
  std::string_view json(ArgsId id) const {
    const std::uint64_t e = entries_[id];
    if (e & kInSource) return "{}";
    return {arena_.data() + (e >> kOffsetShift), length_of(id)};
  }
  std::size_t size() const { return entries_.size(); }
  // Hints to fetch an entry, then its text, ahead of use: the writer reads args in
  // track order, which jumps around the arena (stored in event order), so without
  // them each args object costs a cache miss.
  void prefetch_entry(ArgsId id) const {
    if (id < entries_.size()) __builtin_prefetch(&entries_[id]);
  }
  void prefetch_text(ArgsId id) const {
    if (id >= entries_.size()) return;
    const std::uint64_t e = entries_[id];
    // Three lines cover a typical kernel's args (~130 bytes at any alignment); the
    // hardware prefetcher follows longer texts. The offsets are constant because GCC 12
    // silently dropped prefetches at offsets computed from the length; the arithmetic is
    // on integers because those lines may lie past the arena (a prefetch never faults).
    const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(arena_.data() + (e >> kOffsetShift));
    __builtin_prefetch(reinterpret_cast<const void*>(p));
    __builtin_prefetch(reinterpret_cast<const void*>(p + 64));
    __builtin_prefetch(reinterpret_cast<const void*>(p + 128));
  }
  // Bytes in use. Reserved but untouched capacity (the reader reserves generously up
  // front to avoid regrowth) costs address space, not resident memory, so it is left out.
  std::size_t resident_bytes() const {
    return arena_.size() + entries_.size() * sizeof(std::uint64_t) +
           long_lengths_.size() * sizeof(LongLength);
  }
  void reserve_bytes(std::size_t n) { arena_.reserve(n); }

 private:
  // One 8-byte word per args object (one per event, so it counts): bit 0 says the
  // entry is a location in the source text (add_location) rather than arena text,
  // bits 1-23 hold the length (kLongLength: see long_lengths_), bits 24-63 the offset
  // (up to 1 TiB).
  static constexpr std::uint64_t kInSource = 1;
  static constexpr int kLengthShift = 1;
  static constexpr std::uint64_t kLengthMask = (1u << 23) - 1;
  static constexpr std::uint64_t kLongLength = kLengthMask;
  static constexpr int kOffsetShift = 24;
  std::size_t locations_ = 0;
  struct LongLength {
    ArgsId id;
    std::uint32_t length;
  };
  std::uint32_t length_of(ArgsId id) const {
    const auto len = static_cast<std::uint32_t>((entries_[id] >> kLengthShift) & kLengthMask);
    return len == kLongLength ? long_length(id) : len;
  }
  std::uint32_t long_length(ArgsId id) const;
  ArgsId add_entry(std::uint64_t offset, std::uint64_t length, bool in_source);

  std::vector<char> arena_;
  std::vector<std::uint64_t> entries_;
  // Lengths of 8 MiB and more (rare), by increasing id.
  std::vector<LongLength> long_lengths_;
};

// Builds the JSON text of one args object: {"key":value,...}. Keys and string values
// go through the JSON string escaper, so any bytes are safe.
class ArgsBuilder {
 public:
  ArgsBuilder& add(std::string_view key, std::int64_t value);
  ArgsBuilder& add_uint(std::string_view key, std::uint64_t value);
  ArgsBuilder& add(std::string_view key, double value);  // non-finite -> null
  ArgsBuilder& add(std::string_view key, std::string_view value);
  ArgsBuilder& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  ArgsBuilder& add_bool(std::string_view key, bool value);
  ArgsBuilder& add_ints(std::string_view key, std::initializer_list<std::int64_t> values);
  // Any other integer type (int, unsigned, size_t, bool): without this, add("k", 7)
  // would be ambiguous between the int64, double and const char* overloads.
  template <std::integral T>
  ArgsBuilder& add(std::string_view key, T value) {
    if constexpr (std::same_as<T, bool>) {
      return add_bool(key, value);
    } else if constexpr (std::is_unsigned_v<T>) {
      return add_uint(key, value);
    } else {
      return add(key, static_cast<std::int64_t>(value));
    }
  }
  // `json` must be valid JSON text (an object, array, number...). Copied as is.
  ArgsBuilder& add_raw(std::string_view key, std::string_view json);
  bool empty() const { return text_.empty(); }
  // Returns "{...}" ("{}" when nothing was added); calling it again returns the same
  // text. The builder may be reused after clear().
  std::string_view finish();
  void clear() {
    text_.clear();
    finished_ = false;
  }

 private:
  void key(std::string_view k);
  std::string text_;
  bool finished_ = false;
};

}  // namespace flopline::trace
