// The vocabulary of `flopline stats` and the viewer's FLOP/s table, written once: the
// groupings (what a row is: `--by name|op|category|stream|device`), the columns (what a
// row shows), and which slices a table covers (categories, range). The CLI table, CSV,
// JSON and the viewer's table are renderers over these tables, so a new grouping or
// column is one entry here plus its tests (docs/ARCHITECTURE.md, "Where to start").
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/model.h"
#include "flopline/trace/slice_terms.h"

namespace flopline::trace {

// ---- groupings -----------------------------------------------------------------------

// Where a slice's row comes from: a string of the slice, or a name made from its track
// (computed once per track, so a grouping by track costs nothing per slice).
enum class RowKey : std::uint8_t { kSliceName, kSliceCategory, kTrack };

struct StatsGrouping {
  GroupBy by;
  std::string_view name;                      // the --by word, JSON's "group_by"
  std::span<const std::string_view> aliases;  // other words --by accepts
  std::string_view label;                     // for people: the viewer's picker
  // The categories taken when none are asked for: choices separated by '|', each a
  // comma-separated list ("" = every category). The first choice some slice of the
  // input matches is taken (every category matches any input); the first when none
  // does. "kernel|": kernels when there are any, else everything.
  std::string_view default_categories;
  RowKey key;
  // RowKey::kTrack: the row of the slices of track `track`; nullopt: they are not taken.
  std::optional<std::string> (*track_row)(const Trace& trace, std::uint32_t track) = nullptr;
  // Rows are operators with their GPU busy time (operator_time.h), not slices.
  bool operator_rows = false;
  // GPU work without counts of its own takes its operator's (operator_time.h).
  bool inherit_counts = false;
};

// Every grouping, in the order people are offered them.
std::span<const StatsGrouping> stats_groupings();
const StatsGrouping& stats_grouping(GroupBy by);

// The grouping a word (a name or an alias) names, or an error that lists the valid
// names: "--by 'x' is not a grouping; use name, op, category, stream or device".
struct GroupingMatch {
  const StatsGrouping* grouping = nullptr;
  std::string error;
};
GroupingMatch find_stats_grouping(std::string_view word, std::string_view option = "--by");
// "name, op, category, stream or device"
std::string stats_grouping_names(std::string_view last_separator = " or ");

// The default categories' choices of `g`, parsed: {{"kernel"}, {}} for "kernel|".
std::vector<std::vector<std::string>> default_category_choices(const StatsGrouping& g);

// A track's device and stream as rows name them: "GPU 0", "GPU 0 stream 7"; nullopt
// for a track that is not a GPU stream.
std::optional<std::string> device_row(const Trace& trace, std::uint32_t track);
std::optional<std::string> stream_row(const Trace& trace, std::uint32_t track);

// ---- the slices a table covers -------------------------------------------------------

struct SliceSelection {
  // Categories taken (category_matches); empty = every category.
  std::vector<std::string> categories;
  std::optional<TimeNs> range_begin, range_end;
  // false: slices that start in [begin, end). true: slices that overlap it (a
  // zero-length slice: that lies in it). StatsQuery's two rules.
  bool overlap = false;
  // The range is the caller's to apply (operators clipped by their GPU work): every
  // slice of the categories is visited.
  bool ignore_range = false;
};

// Calls fn(track, row, index, slice) for every slice `sel` takes, row by row. Rows are
// sorted by start: a range is a binary search plus an early stop.
template <typename Fn>
void for_each_selected_slice(const Trace& t, const SliceSelection& sel, Fn&& fn) {
  const std::size_t nstrings = t.strings.size();
  const bool take_all = sel.categories.empty();
  // Per category id: 0 untested, 1 taken, 2 not taken. Tested once per distinct id.
  std::vector<std::uint8_t> cat_state(take_all ? 0 : nstrings, 0);
  const bool ranged = !sel.ignore_range && (sel.range_begin || sel.range_end);
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    const auto& rows = t.tracks[k].rows;
    for (std::uint32_t r = 0; r < rows.size(); ++r) {
      const auto& row = rows[r];
      auto it = row.begin();
      if (ranged && sel.range_begin) {
        const TimeNs b = *sel.range_begin;
        // Slices of a row never overlap, so their ends are sorted too.
        it = sel.overlap ? std::partition_point(row.begin(), row.end(),
                                                [&](const Slice& s) { return s.end() < b; })
                         : std::partition_point(row.begin(), row.end(),
                                                [&](const Slice& s) { return s.start < b; });
      }
      for (; it != row.end(); ++it) {
        const Slice& s = *it;
        if (ranged && sel.range_end && s.start >= *sel.range_end) break;
        if (ranged && sel.overlap) {
          const TimeNs lo = sel.range_begin ? std::max(s.start, *sel.range_begin) : s.start;
          const TimeNs hi = sel.range_end ? std::min(s.end(), *sel.range_end) : s.end();
          if (hi < lo || (hi == lo && s.dur > 0)) continue;  // touches the range only
        }
        if (!take_all) {
          if (s.cat >= nstrings) continue;
          std::uint8_t& st = cat_state[s.cat];
          if (st == 0) {
            st = 2;
            for (const std::string& c : sel.categories) {
              if (category_matches(t.str(s.cat), c)) {
                st = 1;
                break;
              }
            }
          }
          if (st != 1) continue;
        }
        fn(k, r, static_cast<std::uint32_t>(it - row.begin()), s);
      }
    }
  }
}

// ---- columns -------------------------------------------------------------------------

// What a column's number is; each renderer writes it in its own way (the CLI table ns
// with thousands separators, the viewer durations with units, CSV plain digits).
enum class StatsUnit : std::uint8_t {
  kText,
  kCount,
  kNs,
  kPercent,
  kFlop,
  kByte,
  kTflops,
  kGbps,
  kFlopPerByte,
};

// A cell's value: unknown, an integer, a number or text (text is "" when unknown, as
// JSON writes it).
struct StatsValue {
  enum class Kind : std::uint8_t { kUnknown, kInt, kNumber, kText } kind = Kind::kUnknown;
  std::int64_t i = 0;
  double d = 0;
  std::string_view text;

  static StatsValue none() { return {}; }
  static StatsValue integer(std::int64_t v) { return {Kind::kInt, v, 0, {}}; }
  static StatsValue number(double v) { return {Kind::kNumber, 0, v, {}}; }
  static StatsValue number(const std::optional<double>& v) { return v ? number(*v) : none(); }
  static StatsValue ns(const std::optional<TimeNs>& v) { return v ? integer(*v) : none(); }
  static StatsValue string(std::string_view v) { return {Kind::kText, 0, 0, v}; }
  // Known and shown: a finite number, an integer, or text that is not empty.
  bool known() const;
};

// Who shows a column (a bit set).
enum StatsOutputs : std::uint8_t {
  kStatsMachine = 1,  // CSV and JSON, in the columns' order: their order is a contract
  kStatsTable = 2,    // `flopline stats`' table
  kStatsViewer = 4,   // flopline-view's FLOP/s table
  kStatsPeople = kStatsTable | kStatsViewer,
};

// Why the CLI table leaves a column out when no row has a value (its footer says so).
enum class EmptyReason : std::uint8_t { kOther, kCounts, kPeak };

struct StatsColumn {
  std::string_view id;           // CSV header and JSON key: "total_ns"
  std::string_view title;        // the viewer's header (its cells carry their units)
  std::string_view table_title;  // the CLI table's header (nsys' words, plain numbers)
  StatsUnit unit;
  int decimals;  // fixed decimals where people see a plain number
  StatsValue (*value)(const StatsRow& row);
  std::uint8_t outputs;  // StatsOutputs
  // Position among the people's columns (CLI table, viewer), which read as nsys' do
  // rather than in the machines' order.
  int people_order;
  EmptyReason empty_reason = EmptyReason::kOther;
  // People see "!" after the value when this says so (declared FLOPs the counters
  // disagree with).
  bool (*warn)(const StatsRow& row) = nullptr;
  // The row's name: the CLI table puts it last, the viewer first.
  bool is_name = false;
};

// Every column, in the machines' order (new columns go last).
std::span<const StatsColumn> stats_columns();
// The columns of `all` that `output` shows, in its order (people: people_order).
std::vector<const StatsColumn*> columns_for(StatsOutputs output,
                                            std::span<const StatsColumn> all = stats_columns());
// nullptr when no column has this id.
const StatsColumn* find_stats_column(std::string_view id,
                                     std::span<const StatsColumn> all = stats_columns());

}  // namespace flopline::trace
