// The FLOP/s table on top of trace::StatsAccumulator, plus sorting, filtering,
// instances of a row and CSV in `flopline stats --csv`'s format.
#include "core/op_table.h"

#include <algorithm>
#include <array>

#include "core/search.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/stats_csv.h"

namespace flopline::viewer {
namespace {

using trace::GroupBy;
using trace::Slice;
using trace::StatsRow;

// The categories `query` selects over all traces together (analysis.h's rule), so every
// file is filtered the same way; empty = every category.
std::vector<std::string> categories_for(TraceList traces, const OpTableQuery& query) {
  if (!query.categories.empty()) return query.categories;
  return trace::default_categories(traces, query.by);
}

trace::StatsQuery stats_query(const OpTableQuery& q, const std::vector<std::string>& cats) {
  trace::StatsQuery s;
  s.by = q.by;
  s.categories = cats;
  if (q.range) {
    s.range_begin = q.range->begin_ns;
    s.range_end = q.range->end_ns;
    s.clip_to_range = q.range_rule == RangeRule::kOverlapClipped;
  }
  return s;
}

// Calls fn(track, row, index, slice) for every slice the query selects in one trace:
// the category filter, and the range rule (the same as analysis.cc's).
template <typename Fn>
void for_each_selected(const trace::Trace& t, const OpTableQuery& q,
                       const std::vector<std::string>& cats, Fn&& fn) {
  std::vector<std::uint8_t> cat_ok;
  if (!cats.empty()) {
    cat_ok.assign(t.strings.size(), 0);
    for (std::size_t id = 0; id < cat_ok.size(); ++id) {
      const std::string_view c = t.strings.view(static_cast<trace::StringId>(id));
      for (const std::string& want : cats) {
        if (trace::category_matches(c, want)) {
          cat_ok[id] = 1;
          break;
        }
      }
    }
  }
  const bool clip = q.range && q.range_rule == RangeRule::kOverlapClipped;
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    const auto& rows = t.tracks[k].rows;
    for (std::uint32_t r = 0; r < rows.size(); ++r) {
      const auto& row = rows[r];
      auto it = row.begin();
      if (q.range) {
        const std::int64_t b = q.range->begin_ns;
        it = clip ? std::partition_point(row.begin(), row.end(),
                                         [&](const Slice& s) { return s.end() < b; })
                  : std::partition_point(row.begin(), row.end(),
                                         [&](const Slice& s) { return s.start < b; });
      }
      for (; it != row.end(); ++it) {
        const Slice& s = *it;
        if (q.range && s.start >= q.range->end_ns) break;
        if (clip) {
          const std::int64_t lo = std::max(s.start, q.range->begin_ns);
          const std::int64_t hi = std::min(s.end(), q.range->end_ns);
          if (hi < lo || (hi == lo && s.dur > 0)) continue;
        }
        if (!cats.empty() && (s.cat >= cat_ok.size() || !cat_ok[s.cat])) continue;
        fn(k, r, static_cast<std::uint32_t>(it - row.begin()), s);
      }
    }
  }
}

bool has_unknown(const OpRow& r, OpColumn c) {
  switch (c) {
    case OpColumn::kFlops:
      return !r.stats.flops;
    case OpColumn::kBytes:
      return !r.stats.bytes;
    case OpColumn::kTflops:
      return !r.stats.tflops;
    case OpColumn::kGbps:
      return !r.stats.gbps;
    case OpColumn::kPercentPeak:
      return !r.stats.pct_peak;
    case OpColumn::kPrecision:
      return r.precision.empty();
    case OpColumn::kSelf:
      return !r.stats.self_ns;
    case OpColumn::kExtent:
      return !r.stats.extent_ns;
    case OpColumn::kFlopsSource:
      return r.stats.flops_source.empty();
    default:
      return false;
  }
}

// a < b for a column whose values are both known.
bool less_by(const OpRow& a, const OpRow& b, OpColumn c) {
  const StatsRow& x = a.stats;
  const StatsRow& y = b.stats;
  switch (c) {
    case OpColumn::kName:
      return x.name < y.name;
    case OpColumn::kCount:
      return x.count < y.count;
    case OpColumn::kTotal:
      return x.total_ns < y.total_ns;
    case OpColumn::kAverage:
      return x.avg_ns < y.avg_ns;
    case OpColumn::kMedian:
      return x.median_ns < y.median_ns;
    case OpColumn::kMin:
      return x.min_ns < y.min_ns;
    case OpColumn::kMax:
      return x.max_ns < y.max_ns;
    case OpColumn::kPercent:
      return x.pct < y.pct;
    case OpColumn::kFlops:
      return *x.flops < *y.flops;
    case OpColumn::kBytes:
      return *x.bytes < *y.bytes;
    case OpColumn::kTflops:
      return *x.tflops < *y.tflops;
    case OpColumn::kGbps:
      return *x.gbps < *y.gbps;
    case OpColumn::kPercentPeak:
      return *x.pct_peak < *y.pct_peak;
    case OpColumn::kPrecision:
      return a.precision < b.precision;
    case OpColumn::kSelf:
      return *x.self_ns < *y.self_ns;
    case OpColumn::kExtent:
      return *x.extent_ns < *y.extent_ns;
    case OpColumn::kFlopsSource:
      return x.flops_source < y.flops_source;
  }
  return false;
}

bool trace_has_peaks(const trace::Trace& t) {
  for (const trace::DeviceProperties& d : t.devices) {
    if (d.peak_bytes_per_s > 0) return true;
    for (const auto& [precision, peak] : d.peak_flops) {
      if (peak > 0) return true;
    }
  }
  return false;
}

}  // namespace

std::string_view op_column_title(OpColumn c) {
  static constexpr std::array<std::string_view, kOpColumnCount> kTitles{
      "Name",  "Count",   "Total", "Average", "Median",    "Min",  "Max",    "% time",    "FLOPs",
      "Bytes", "TFLOP/s", "GB/s",  "% peak",  "Precision", "Self", "Extent", "FLOPs from"};
  return kTitles[static_cast<std::size_t>(c)];
}

OpTable build_op_table(TraceList traces, const OpTableQuery& query, OperatorList operators) {
  OpTable table;
  table.query_ = query;
  const std::vector<std::string> cats = categories_for(traces, query);
  trace::StatsAccumulator acc(query.by);
  const trace::StatsQuery sq = stats_query(query, cats);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    acc.add(*traces[i], sq, i < operators.size() ? operators[i] : nullptr);
    table.has_peaks_ = table.has_peaks_ || trace_has_peaks(*traces[i]);
    if (query.counted_coverage) {
      if (!table.counted_) table.counted_.emplace();
      table.counted_->add(trace::counted_coverage(*traces[i]));
    }
  }
  trace::StatsResult result = acc.finish();
  table.total_ns_ = result.total_ns;
  table.slices_ = result.slices_considered;
  table.categories_used = std::move(result.categories_used);
  table.all_categories = result.all_categories;
  table.rows_.reserve(result.rows.size());
  for (StatsRow& r : result.rows) {
    OpRow row;
    row.precision = r.precision;
    row.stats = std::move(r);
    table.rows_.push_back(std::move(row));
  }
  return table;
}

void OpTable::sort(OpColumn column, bool descending) {
  sort_column_ = column;
  sort_descending_ = descending;
  std::stable_sort(rows_.begin(), rows_.end(), [&](const OpRow& a, const OpRow& b) {
    const bool ua = has_unknown(a, column);
    const bool ub = has_unknown(b, column);
    if (ua || ub) return !ua && ub;  // unknown last, whatever the direction
    return descending ? less_by(b, a, column) : less_by(a, b, column);
  });
}

std::vector<std::size_t> OpTable::filtered(std::string_view filter) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (contains_case_insensitive(rows_[i].stats.name, filter)) out.push_back(i);
  }
  return out;
}

std::vector<SliceHandle> row_instances(TraceList traces, const OpTableQuery& query,
                                       std::string_view row_name) {
  const std::vector<std::string> cats = categories_for(traces, query);
  std::vector<std::pair<std::int64_t, SliceHandle>> found;
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const trace::Trace& t = *traces[ti];
    const trace::StringId id = t.strings.find(row_name);
    if (id == trace::kNone) continue;
    for_each_selected(t, query, cats,
                      [&](std::uint32_t k, std::uint32_t r, std::uint32_t i, const Slice& s) {
                        if ((query.by == GroupBy::kCategory ? s.cat : s.name) == id) {
                          found.emplace_back(s.start, SliceHandle{ti, trace::SliceRef{k, r, i}});
                        }
                      });
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return handle_less(a.second, b.second);
  });
  std::vector<SliceHandle> out;
  out.reserve(found.size());
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

SliceHandle longest_instance(TraceList traces, const std::vector<SliceHandle>& instances) {
  SliceHandle best;
  std::int64_t best_dur = -1;
  for (const SliceHandle& h : instances) {
    const std::int64_t d = slice_of(traces, h).dur;
    if (d > best_dur) {
      best_dur = d;
      best = h;
    }
  }
  return best;
}

std::string op_table_csv(const OpTable& table, const std::vector<std::size_t>& rows) {
  // The columns and cells of `flopline stats --csv` (the same writer, so numbers,
  // columns and escaping are the same byte for byte).
  std::string out(trace::kStatsCsvColumns);
  out += '\n';
  auto add_row = [&](const OpRow& r) {
    trace::append_stats_csv_row(out, r.stats);
    out += '\n';
  };
  if (rows.empty()) {
    for (const OpRow& r : table.rows()) add_row(r);
  } else {
    for (std::size_t i : rows) {
      if (i < table.rows().size()) add_row(table.rows()[i]);
    }
  }
  return out;
}

}  // namespace flopline::viewer
