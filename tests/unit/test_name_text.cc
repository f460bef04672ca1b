// Shortened names told apart (name_text.h) against the first version, which compared
// every pair of names, on generated templated kernel names that share their start and
// end: the names that made that version take seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "flopline/trace/name_text.h"

namespace flopline::trace {
namespace {

// The rule of name_text.h as it was first written, comparing every pair of names (the
// version that took seconds on thousands of names): the reference the fast one follows.
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

void pairwise_reference(std::span<const std::string_view> full, std::span<std::string> shown,
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

std::vector<std::string> reference(const std::vector<std::string_view>& full,
                                   std::vector<std::string> shown, std::size_t fragment_bytes) {
  pairwise_reference(full, shown, fragment_bytes);
  return shown;
}

TEST(DisambiguateNames, AgreesWithComparingEveryPair) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> names;
    const int n = 2 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      // Shared start and end, a few differing template arguments, some repeats, and
      // some that differ only far past the fragment.
      std::string s = "void cutlass::Kernel<cutlass::gemm::GemmUniversal<";
      s += std::to_string(rng() % 4) + ", " + std::to_string(rng() % 3);
      if (rng() % 5 == 0) s += std::string(120, 'x') + std::to_string(rng() % 2);
      s += ", true>>(Params)";
      names.push_back(s);
    }
    std::vector<std::string_view> full(names.begin(), names.end());
    std::vector<std::string> shown(n, "void cutlass::Kernel<...>(Params)");
    std::vector<std::string> fast = shown;
    disambiguate_names(full, fast, 48);
    const std::vector<std::string> slow = reference(full, shown, 48);
    // The same text, except where fragments still clash: the pairwise version showed all
    // but the last of the clashing names in full (it changed them as it went), the fast
    // one shows all of them in full.
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(fast[i] == slow[i] || fast[i] == full[i])
          << "round " << round << ", name " << i << ": " << full[i] << "\n fast " << fast[i]
          << "\n slow " << slow[i];
    }
    // Different full names never read the same afterwards.
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (full[a] != full[b]) {
          EXPECT_NE(fast[a], fast[b]);
        }
      }
    }
  }
}

TEST(DisambiguateNames, EqualFullNamesAreLeftAlone) {
  const std::vector<std::string_view> full = {"k<1>", "k<1>"};
  std::vector<std::string> shown = {"k<...>", "k<...>"};
  disambiguate_names(full, shown);
  EXPECT_EQ(shown[0], "k<...>");
  EXPECT_EQ(shown[1], "k<...>");
}

}  // namespace
}  // namespace flopline::trace
