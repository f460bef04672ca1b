// Interned strings: every name, category and label is stored once and events hold
// 32-bit ids. Views returned by view() stay valid for the table's lifetime (strings
// live in chunks that never move).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "flopline/trace/types.h"

namespace flopline::trace {

class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) noexcept;
  StringTable& operator=(StringTable&&) noexcept;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  ~StringTable();

  // Returns the id of `s`, adding it if new. Any bytes are allowed (NUL, invalid UTF-8).
  StringId intern(std::string_view s);
  // Returns the id of `s` if present, kNone otherwise. Does not add.
  StringId find(std::string_view s) const;
  std::string_view view(StringId id) const { return views_[id]; }
  std::size_t size() const { return views_.size(); }
  // Bytes held: string bytes plus index overhead.
  std::size_t resident_bytes() const;

 private:
  void grow_index();
  const char* store(std::string_view s);

  std::vector<std::string_view> views_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint32_t> index_;                  // open addressing, kNone = empty
  std::vector<std::unique_ptr<char[]>> chunks_;       // 1 MB arenas for small strings
  std::vector<std::unique_ptr<char[]>> big_strings_;  // one allocation per big string
  std::size_t big_bytes_ = 0;
  std::size_t chunk_used_ = 0;
  std::size_t chunk_size_ = 0;
};

std::uint64_t hash_bytes(std::string_view s);

}  // namespace flopline::trace
