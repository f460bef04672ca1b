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

// The slices the query takes in one trace (stats_schema.h's selection).
trace::SliceSelection selection(const OpTableQuery& q, const std::vector<std::string>& cats) {
  trace::SliceSelection sel;
  sel.categories = cats;
  if (q.range) {
    sel.range_begin = q.range->begin_ns;
    sel.range_end = q.range->end_ns;
    sel.overlap = q.range_rule == RangeRule::kOverlapClipped;
  }
  return sel;
}

// Unknown cells sort last whatever the direction: no value, or empty text.
bool has_unknown(const trace::StatsValue& v) {
  return v.kind == trace::StatsValue::Kind::kUnknown ||
         (v.kind == trace::StatsValue::Kind::kText && v.text.empty());
}

// a < b for two known values of one column.
bool less_value(const trace::StatsValue& a, const trace::StatsValue& b) {
  switch (a.kind) {
    case trace::StatsValue::Kind::kInt:
      return a.i < b.i;
    case trace::StatsValue::Kind::kNumber:
      return a.d < b.d;
    case trace::StatsValue::Kind::kText:
      return a.text < b.text;
    case trace::StatsValue::Kind::kUnknown:
      break;
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

void OpTable::sort(const trace::StatsColumn& column, bool descending) {
  sort_column_ = &column;
  sort_descending_ = descending;
  std::stable_sort(rows_.begin(), rows_.end(), [&](const OpRow& a, const OpRow& b) {
    const trace::StatsValue va = column.value(a.stats);
    const trace::StatsValue vb = column.value(b.stats);
    const bool ua = has_unknown(va);
    const bool ub = has_unknown(vb);
    if (ua || ub) return !ua && ub;  // unknown last, whatever the direction
    return descending ? less_value(vb, va) : less_value(va, vb);
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
  const trace::SliceSelection sel = selection(query, cats);
  const trace::StatsGrouping& g = trace::stats_grouping(query.by);
  std::vector<std::pair<std::int64_t, SliceHandle>> found;
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const trace::Trace& t = *traces[ti];
    auto add = [&](std::uint32_t k, std::uint32_t r, std::uint32_t i, const Slice& s) {
      found.emplace_back(s.start, SliceHandle{ti, trace::SliceRef{k, r, i}});
    };
    if (g.key == trace::RowKey::kTrack) {
      // The row is made of tracks: those whose row name is this one.
      std::vector<std::uint8_t> in_row(t.tracks.size(), 0);
      for (std::uint32_t k = 0; k < t.tracks.size(); ++k) in_row[k] = g.track_row(t, k) == row_name;
      for_each_selected_slice(
          t, sel, [&](std::uint32_t k, std::uint32_t r, std::uint32_t i, const Slice& s) {
            if (in_row[k]) add(k, r, i, s);
          });
      continue;
    }
    const trace::StringId id = t.strings.find(row_name);
    if (id == trace::kNone) continue;
    const bool by_cat = g.key == trace::RowKey::kSliceCategory;
    for_each_selected_slice(t, sel,
                            [&](std::uint32_t k, std::uint32_t r, std::uint32_t i, const Slice& s) {
                              if ((by_cat ? s.cat : s.name) == id) add(k, r, i, s);
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
  std::string out = trace::stats_csv_header();
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
