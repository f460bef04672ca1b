// Shortened names that stay apart; see name_text.h.
#include "flopline/trace/name_text.h"

#include <algorithm>
#include <map>
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

void disambiguate_names(std::span<const std::string_view> full, std::span<std::string> shown,
                        std::size_t fragment_bytes) {
  const std::size_t n = std::min(full.size(), shown.size());
  std::map<std::string, std::vector<std::size_t>> by_shown;
  for (std::size_t i = 0; i < n; ++i) by_shown[shown[i]].push_back(i);
  for (auto& [text, members] : by_shown) {
    if (members.size() < 2) continue;
    bool differ = false;
    for (std::size_t k = 1; k < members.size(); ++k)
      differ = differ || full[members[k]] != full[members[0]];
    if (!differ) continue;
    std::vector<std::string> next(members.size());
    for (std::size_t a = 0; a < members.size(); ++a) {
      // The first byte where this name differs from its closest other name.
      std::size_t diff = 0;
      for (std::size_t b = 0; b < members.size(); ++b) {
        if (full[members[a]] != full[members[b]])
          diff = std::max(diff, common_prefix(full[members[a]], full[members[b]]));
      }
      const std::string_view f = full[members[a]];
      next[a] = text + " [" + fragment(f, token_start(f, diff), fragment_bytes) + "]";
    }
    // Still equal (the difference lies past the fragment): those are shown in full.
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = 0; b < members.size(); ++b) {
        if (a != b && next[a] == next[b] && full[members[a]] != full[members[b]]) {
          next[a] = std::string(full[members[a]]);
          break;
        }
      }
    }
    for (std::size_t a = 0; a < members.size(); ++a) shown[members[a]] = std::move(next[a]);
  }
}

}  // namespace flopline::trace
