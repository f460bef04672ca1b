// Which slices a stats query takes: category matching and the default categories.
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::trace {
namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// True when some slice of `trace` has a category matching `wanted`. Each distinct
// category id is tested once; the scan stops at the first hit.
bool any_slice_in(const Trace& trace, std::string_view wanted) {
  std::vector<std::uint8_t> state(trace.strings.size(), 0);  // 0 untested, 1 yes, 2 no
  for (const Track& track : trace.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.cat >= state.size()) continue;
        std::uint8_t& st = state[s.cat];
        if (st == 0) st = category_matches(trace.str(s.cat), wanted) ? 1 : 2;
        if (st == 1) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool category_matches(std::string_view cat, std::string_view wanted) {
  wanted = trim(wanted);
  if (equal_ignoring_case(trim(cat), wanted)) return true;
  // Chrome's cat is a comma-separated list of tags; Kineto never writes one, so the
  // split only runs when there is a comma.
  if (cat.find(',') == std::string_view::npos) return false;
  while (!cat.empty()) {
    const auto comma = cat.find(',');
    const std::string_view part = cat.substr(0, comma);
    if (equal_ignoring_case(trim(part), wanted)) return true;
    if (comma == std::string_view::npos) break;
    cat.remove_prefix(comma + 1);
  }
  return false;
}

DefaultCategories::DefaultCategories(GroupBy by)
    : choices_(default_category_choices(stats_grouping(by))), seen_(choices_.size(), false) {}

void DefaultCategories::note(const Trace& t) {
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    // Every category matches any input: the choice is taken when it is reached.
    if (seen_[i] || choices_[i].empty()) continue;
    for (const std::string& c : choices_[i]) {
      if (any_slice_in(t, c)) {
        seen_[i] = true;
        break;
      }
    }
  }
}

std::vector<std::string> DefaultCategories::categories() const {
  for (std::size_t i = 0; i < choices_.size(); ++i) {
    if (seen_[i] || choices_[i].empty()) return choices_[i];
  }
  return choices_.empty() ? std::vector<std::string>{} : choices_.front();
}

std::vector<std::string> default_categories(std::span<const Trace* const> traces, GroupBy by) {
  DefaultCategories d(by);
  for (const Trace* t : traces) {
    if (t != nullptr) d.note(*t);
  }
  return d.categories();
}

std::vector<std::string> default_categories(const Trace& trace, GroupBy by) {
  const Trace* one[] = {&trace};
  return default_categories(std::span<const Trace* const>(one), by);
}

}  // namespace flopline::trace
