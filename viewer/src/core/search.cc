// Name search: each distinct name is tested once, then one pass over the slices.
#include "core/search.h"

#include <algorithm>
#include <tuple>

#include "core/flows.h"

namespace flopline::viewer {
namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

bool contains_case_insensitive(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > haystack.size()) return false;
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end();
}

void SliceSearch::run(TraceList traces, std::string_view query) {
  query_ = std::string(query);
  matches_.clear();
  if (query.empty()) return;
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const trace::Trace& t = *traces[ti];
    std::vector<std::uint8_t> hit(t.strings.size(), 0);
    bool any = false;
    for (std::size_t id = 0; id < hit.size(); ++id) {
      if (contains_case_insensitive(t.strings.view(static_cast<trace::StringId>(id)), query)) {
        hit[id] = 1;
        any = true;
      }
    }
    if (!any) continue;
    for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
      const auto& rows = t.tracks[k].rows;
      for (std::uint32_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        for (std::uint32_t i = 0; i < row.size(); ++i) {
          const trace::StringId name = row[i].name;
          if (name < hit.size() && hit[name]) {
            matches_.push_back(
                SearchMatch{row[i].start, SliceHandle{ti, trace::SliceRef{k, r, i}}});
          }
        }
      }
    }
  }
  std::sort(matches_.begin(), matches_.end(), [](const SearchMatch& a, const SearchMatch& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return handle_less(a.slice, b.slice);
  });
}

std::optional<std::size_t> SliceSearch::next_after(std::int64_t t_ns) const {
  if (matches_.empty()) return std::nullopt;
  const auto it = std::partition_point(matches_.begin(), matches_.end(),
                                       [&](const SearchMatch& m) { return m.start_ns <= t_ns; });
  return it == matches_.end() ? 0 : static_cast<std::size_t>(it - matches_.begin());
}

std::optional<std::size_t> SliceSearch::previous_before(std::int64_t t_ns) const {
  if (matches_.empty()) return std::nullopt;
  const auto it = std::partition_point(matches_.begin(), matches_.end(),
                                       [&](const SearchMatch& m) { return m.start_ns < t_ns; });
  return it == matches_.begin() ? matches_.size() - 1
                                : static_cast<std::size_t>(it - matches_.begin()) - 1;
}

std::optional<std::size_t> SliceSearch::step(std::size_t current, int direction) const {
  const std::size_t n = matches_.size();
  if (n == 0) return std::nullopt;
  if (current >= n) return direction >= 0 ? 0 : n - 1;
  return direction >= 0 ? (current + 1) % n : (current + n - 1) % n;
}

}  // namespace flopline::viewer
