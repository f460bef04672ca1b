// Shortened names that stay apart; see name_text.h.
#include "flopline/trace/name_text.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace flopline::trace {
namespace {

bool is_continuation(std::string_view s, std::size_t i) {
  return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
}

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Back from the first differing byte to the start of the argument or word holding it.
std::size_t token_start(std::string_view s, std::size_t at) {
  while (at > 0) {
    const char c = s[at - 1];
    if (c == '<' || c == ',' || c == '(' || c == ' ' || c == '[' || c == '_' || c == ':') break;
    --at;
  }
  return at;
}

std::string fragment(std::string_view full, std::size_t from, std::size_t max_bytes) {
  while (from > 0 && is_continuation(full, from)) --from;
  std::string out = from > 0 ? "..." : "";
  std::size_t end = std::min(full.size(), from + max_bytes);
  while (end < full.size() && is_continuation(full, end)) --end;
  out.append(full.substr(from, end - from));
  if (end < full.size()) out += "...";
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

void disambiguate_names(std::span<const std::string_view> full, std::span<std::string> shown,
                        std::size_t fragment_bytes) {
  const std::size_t n = std::min(full.size(), shown.size());
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_shown;
  for (std::size_t i = 0; i < n; ++i) by_shown[shown[i]].push_back(i);
  std::vector<std::pair<std::size_t, std::string>> updates;  // applied after: keys view shown
  for (auto& [text, members] : by_shown) {
    if (members.size() < 2) continue;
    // Sorted by full name, the name closest to each one (the longest common prefix with
    // any different name) is the nearest different name before or after it: n log n
    // rather than comparing every pair, which took seconds on thousands of templated
    // kernels that share their start and end.
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return full[a] < full[b]; });
    if (full[members.front()] == full[members.back()]) continue;  // one name, one row
    std::vector<std::string> next(members.size());
    std::size_t run_start = 0;
    while (run_start < members.size()) {
      std::size_t run_end = run_start + 1;  // [run_start, run_end): equal full names
      while (run_end < members.size() && full[members[run_end]] == full[members[run_start]])
        ++run_end;
      const std::string_view f = full[members[run_start]];
      std::size_t diff = 0;
      if (run_start > 0) diff = common_prefix(f, full[members[run_start - 1]]);
      if (run_end < members.size()) diff = std::max(diff, common_prefix(f, full[members[run_end]]));
      const std::string text_of_run =
          std::string(text) + " [" + fragment(f, token_start(f, diff), fragment_bytes) + "]";
      for (std::size_t a = run_start; a < run_end; ++a) next[a] = text_of_run;
      run_start = run_end;
    }
    // Still equal (the difference lies past the fragment): those are shown in full.
    std::unordered_map<std::string_view, std::string_view> first_full;  // text -> a full name
    std::unordered_map<std::string_view, bool> clash;
    for (std::size_t a = 0; a < members.size(); ++a) {
      auto [it, fresh] = first_full.try_emplace(next[a], full[members[a]]);
      if (!fresh && it->second != full[members[a]]) clash[next[a]] = true;
    }
    for (std::size_t a = 0; a < members.size(); ++a) {
      if (clash.count(next[a]) != 0) {
        updates.emplace_back(members[a], std::string(full[members[a]]));
      } else {
        updates.emplace_back(members[a], next[a]);
      }
    }
  }
  for (auto& [i, text] : updates) shown[i] = std::move(text);
}

}  // namespace flopline::trace
