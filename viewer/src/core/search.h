// Search (`/` or Ctrl+F): case-insensitive (ASCII) substring match over slice names,
// matches sorted by time, next/previous relative to a current time with wraparound.
//
// Names are interned, so each distinct name is tested once; then one pass over the
// slices collects those whose name matched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/slice_handle.h"

namespace flopline::viewer {

struct SearchMatch {
  std::int64_t start_ns = 0;
  SliceHandle slice;
};

class SliceSearch {
 public:
  // Replaces the matches. An empty query matches nothing.
  void run(TraceList traces, std::string_view query);
  const std::string& query() const { return query_; }
  std::size_t count() const { return matches_.size(); }
  // Sorted by start, then trace, track, row, index.
  const std::vector<SearchMatch>& matches() const { return matches_; }
  // The first match starting strictly after t_ns, wrapping to the first; nullopt when
  // there is no match.
  std::optional<std::size_t> next_after(std::int64_t t_ns) const;
  // The last match starting strictly before t_ns, wrapping to the last.
  std::optional<std::size_t> previous_before(std::int64_t t_ns) const;
  // From a current match index, the next (direction > 0) or previous match with
  // wraparound: matches that start at the same time are visited one by one.
  std::optional<std::size_t> step(std::size_t current, int direction) const;

 private:
  std::string query_;
  std::vector<SearchMatch> matches_;
};

// ASCII case-insensitive substring test (bytes >= 0x80 compare exactly).
bool contains_case_insensitive(std::string_view haystack, std::string_view needle);

}  // namespace flopline::viewer
