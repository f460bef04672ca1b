// Slice aggregation for `flopline stats` and the viewer's tables.
//
// Speed (10M slices in a few hundred ms, with 500 or 200,000 distinct names alike):
// - one pass over the slices; a group is found through a vector indexed by StringId
//   (no hashing per slice); a group's name is hashed once per trace;
// - the pass only appends (group, duration) to two flat arrays: per-group structs
//   touched for every slice would miss the cache once there are many names;
// - finish() counting-sorts the durations by group, then reads each group's
//   contiguous run once for total, min, max and deviation, and nth_element gives the
//   exact median in linear time. Keeping every duration is also what lets groups of
//   several traces merge without loss.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis_internal.h"
#include "flopline/trace/analysis.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::trace {
namespace {

using detail::Int128;

// FLOP/byte sums of a group; touched only by slices that carry counts. Kept to one
// cache line (durations summed as double: they only feed rates, and a double holds
// 104 days of nanoseconds exactly), because with many names every touch is a miss.
struct GroupCounts {
  double flops = 0;       // over instances that carry flops
  double bytes = 0;       // over instances that carry bytes
  double flops_dur = 0;   // ns of the instances that carry flops
  double bytes_dur = 0;   // ns of the instances that carry bytes
  double attainable = 0;  // ns at the attainable rate, instances with a known peak
  double peak_dur = 0;    // ns of those instances
  bool has_flops = false;
  bool has_bytes = false;
  bool has_peak = false;
};
static_assert(sizeof(GroupCounts) <= 64);

TimeNs saturate(Int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<TimeNs>(v);
}

// Rounds num / den (den > 0) to nearest, halves away from zero.
TimeNs div_round(Int128 num, Int128 den) {
  const Int128 q = num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
  return saturate(q);
}

// Exact median; for an even count, the mean of the two middle values rounded down
// (floor), which needs no floating point and cannot overflow.
TimeNs median_of(std::span<TimeNs> d) {
  const std::size_t n = d.size();
  const auto mid = d.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(d.begin(), mid, d.end());
  const TimeNs upper = *mid;
  if (n % 2 == 1) return upper;
  const TimeNs lower = *std::max_element(d.begin(), mid);
  const Int128 sum = static_cast<Int128>(lower) + upper;
  // Floor division for negative sums too (durations are >= 0 in a valid trace).
  return saturate(sum >= 0 ? sum / 2 : -((-sum + 1) / 2));
}

// Population standard deviation, two-pass in long double: sums of squares of
// nanosecond durations overflow 64-bit (and even 128-bit) integers.
TimeNs stddev_of(std::span<const TimeNs> d, Int128 total) {
  const long double n = static_cast<long double>(d.size());
  const long double mean = static_cast<long double>(total) / n;
  long double sq = 0;
  for (TimeNs x : d) {
    const long double dev = static_cast<long double>(x) - mean;
    sq += dev * dev;
  }
  const long double sd = std::sqrt(sq / n);
  if (!(sd < 9.2e18L)) return INT64_MAX;
  return static_cast<TimeNs>(std::llround(sd));
}

std::optional<double> rate(double amount, double dur_ns) {
  if (!(dur_ns > 0)) return std::nullopt;  // a rate over zero time means nothing
  return amount / dur_ns;
}

// What few slices touch: operator GPU times, and the precision and FLOP source of the
// instances that carry FLOPs.
struct GroupExtra {
  Int128 busy = 0, self = 0, device_total = 0, extent = 0, cpu = 0;
  bool op_times = false;
  Int128 window = 0;  // top-level ranges' windows (operator_time.h)
  bool has_window = false;
  std::string precision;
  bool mixed_precision = false;
  std::uint8_t sources = 0;  // bit (1 << FlopsSource) per source seen
  // Instances with declared and counted FLOPs both: their sums.
  double compared_declared = 0, compared_counted = 0;
  bool compared = false;

  void note_precision(std::string_view p) {
    if (p.empty() || mixed_precision) return;
    if (precision.empty()) {
      precision = p;
    } else if (precision != p) {
      mixed_precision = true;
    }
  }
};

// The row of one group from its durations (any order; reordered here) and counts.
StatsRow make_row(std::string name, std::span<TimeNs> durs, const GroupCounts& c,
                  const GroupExtra& x) {
  StatsRow r;
  r.name = std::move(name);
  r.count = durs.size();
  Int128 total = 0;
  TimeNs lo = INT64_MAX, hi = INT64_MIN;
  for (TimeNs d : durs) {
    total += d;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  r.total_ns = saturate(total);
  r.avg_ns = div_round(total, static_cast<Int128>(r.count));
  r.min_ns = lo;
  r.max_ns = hi;
  r.std_ns = stddev_of(durs, total);
  r.median_ns = median_of(durs);
  if (c.has_flops) {
    r.flops = c.flops;
    // FLOPs per ns are GFLOP/s; / 1e3 gives TFLOP/s.
    if (auto f = rate(c.flops, c.flops_dur)) r.tflops = *f / 1e3;
  }
  if (c.has_bytes) {
    r.bytes = c.bytes;
    r.gbps = rate(c.bytes, c.bytes_dur);  // bytes per ns are GB/s
  }
  if (c.has_peak && c.peak_dur > 0) {
    r.pct_peak = static_cast<double>(100.0L * c.attainable / static_cast<long double>(c.peak_dur));
  }
  r.precision = x.mixed_precision ? "mixed" : x.precision;
  for (const FlopsSource f :
       {FlopsSource::kTrace, FlopsSource::kShapes, FlopsSource::kNested, FlopsSource::kCounters}) {
    if ((x.sources & (1u << static_cast<unsigned>(f))) == 0) continue;
    r.flops_source = r.flops_source.empty() ? to_string(f) : "mixed";
  }
  if (c.has_flops && c.has_bytes && c.bytes > 0) r.intensity = c.flops / c.bytes;
  if (x.compared) {
    r.counted_flops = x.compared_counted;
    // Below one FLOP the counters counted nothing to compare with (1e-300 would give a
    // difference of inf%).
    if (x.compared_counted >= 1) {
      const double pct = 100.0 * (x.compared_declared - x.compared_counted) / x.compared_counted;
      if (std::isfinite(pct)) r.declared_vs_counted_pct = pct;
    }
  }
  if (x.op_times) {
    r.busy_ns = saturate(x.busy);
    r.self_ns = saturate(x.self);
    r.device_total_ns = saturate(x.device_total);
    r.extent_ns = saturate(x.extent);
    r.cpu_ns = saturate(x.cpu);
  }
  if (x.has_window) r.window_busy_ns = saturate(x.window);
  return r;
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& s : from) {
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
  }
}

}  // namespace

bool flops_disagree(const StatsRow& r) {
  return r.declared_vs_counted_pct && std::fabs(*r.declared_vs_counted_pct) > kFlopsDisagreementPct;
}

struct StatsAccumulator::Impl {
  GroupBy by = GroupBy::kName;
  std::vector<std::string> names;                        // per group
  std::vector<GroupCounts> counts;                       // per group
  std::vector<GroupExtra> extras;                        // per group
  std::unordered_map<std::string, std::uint32_t> index;  // name -> group
  // One entry per taken slice, in the order taken.
  std::vector<std::uint32_t> slice_group;
  std::vector<TimeNs> slice_dur;
  std::vector<std::string> categories;
  bool all_categories = false;
  double total_flops = 0;
  bool any_flops = false;

  void add(const Trace& trace, const StatsQuery& query, const OperatorIndex* operators);
  std::uint32_t group_for(std::string_view name) {
    auto [it, inserted] =
        index.try_emplace(std::string(name), static_cast<std::uint32_t>(names.size()));
    if (inserted) {
      names.push_back(it->first);
      counts.emplace_back();
      extras.emplace_back();
    }
    return it->second;
  }
  // Adds the counts of one instance that took `dur` (its share of FLOPs and bytes).
  template <typename PrecisionFn>
  void add_counts(std::uint32_t g, const Trace& trace, const Slice& s, const SliceMetrics& m,
                  const DeviceProperties* dev, TimeNs dur, double share, bool in_total,
                  FlopsSource source, PrecisionFn&& precision) {
    GroupCounts& c = counts[g];
    if (m.has_flops()) {
      c.has_flops = true;
      c.flops += m.flops * share;
      c.flops_dur += static_cast<double>(dur);
      GroupExtra& x = extras[g];
      x.note_precision(precision());
      if (source != FlopsSource::kNoFlops)
        x.sources |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(source));
      if (source == FlopsSource::kTrace) {
        if (const auto counted = counted_flops_beside_declared(trace, s)) {
          x.compared = true;
          x.compared_declared += m.flops * share;
          x.compared_counted += *counted * share;
        }
      }
      any_flops = true;
      if (in_total) total_flops += m.flops * share;
    }
    if (m.has_bytes()) {
      c.has_bytes = true;
      c.bytes += m.bytes * share;
      c.bytes_dur += static_cast<double>(dur);
    }
    if (auto ns = detail::attainable_ns(trace, s, m, dev, precision)) {
      c.has_peak = true;
      c.attainable += static_cast<double>(*ns) * share;
      c.peak_dur += static_cast<double>(dur);
    }
  }
};

void StatsAccumulator::Impl::add(const Trace& trace, const StatsQuery& query,
                                 const OperatorIndex* operators) {
  const std::vector<std::string> cats = query.all_categories       ? std::vector<std::string>{}
                                        : query.categories.empty() ? default_categories(trace, by)
                                                                   : query.categories;
  const bool take_all = cats.empty();
  if (take_all) {
    all_categories = true;
  } else {
    add_unique(categories, cats);
  }

  const StatsGrouping& grouping = stats_grouping(by);
  std::optional<OperatorIndex> built;
  if (operators == nullptr && (grouping.operator_rows || grouping.inherit_counts)) {
    built = OperatorIndex::build(trace);
    operators = &*built;
  }
  const bool owned = operators != nullptr && operators->owns_gpu_work();
  const bool op_rows = grouping.operator_rows && owned;
  const bool inherit = grouping.inherit_counts && owned;
  std::vector<char> op_taken(op_rows ? operators->operators().size() : 0, 0);

  const std::size_t nstrings = trace.strings.size();
  // Per key id (name or category): the group, resolved once per distinct id.
  const bool by_track = grouping.key == RowKey::kTrack;
  std::vector<std::uint32_t> group_of(by_track ? 0 : nstrings, kNone);
  // RowKey::kTrack: per track, its row (made once: 0 not yet, 1 taken, 2 not taken)
  // and its group.
  std::vector<std::uint8_t> track_state(by_track ? trace.tracks.size() : 0, 0);
  std::vector<std::optional<std::string>> track_row(track_state.size());
  std::vector<std::uint32_t> track_group(track_state.size(), kNone);
  const std::vector<const DeviceProperties*> device = detail::devices_by_track(trace);
  const bool clip = query.clip_to_range;
  // At most every slice is taken; growing by doubling would copy the arrays ~log n
  // times. Untouched reserved pages cost no memory.
  const std::size_t most = trace.slice_count();
  slice_group.reserve(slice_group.size() + most);
  slice_dur.reserve(slice_dur.size() + most);
  const TimeNs range_lo = query.range_begin.value_or(INT64_MIN);
  const TimeNs range_hi = query.range_end.value_or(INT64_MAX);

  SliceSelection sel;
  if (!take_all) sel.categories = cats;
  sel.range_begin = query.range_begin;
  sel.range_end = query.range_end;
  sel.overlap = clip;
  // An operator's time is that of its GPU work, which its CPU slice may not overlap:
  // with clipping, every operator slice is looked at.
  sel.ignore_range = op_rows && clip;

  // Whether the grouping gives the slice a row at all.
  auto has_row = [&](std::uint32_t t, const Slice& s) {
    if (!by_track) return (grouping.key == RowKey::kSliceCategory ? s.cat : s.name) < nstrings;
    if (track_state[t] == 0) {
      track_row[t] = grouping.track_row(trace, t);
      track_state[t] = track_row[t] ? 1 : 2;
    }
    return track_state[t] == 1;
  };
  // The slice's group (has_row was true), made when first taken so that no empty row
  // is ever made.
  auto group_of_slice = [&](std::uint32_t t, const Slice& s) -> std::uint32_t {
    std::uint32_t& gi = by_track
                            ? track_group[t]
                            : group_of[grouping.key == RowKey::kSliceCategory ? s.cat : s.name];
    if (gi == kNone)
      gi = group_for(by_track ? std::string_view(*track_row[t])
                              : trace.str(grouping.key == RowKey::kSliceCategory ? s.cat : s.name));
    return gi;
  };

  for_each_selected_slice(
      trace, sel, [&](std::uint32_t t, std::uint32_t r, std::uint32_t i, const Slice& s) {
        if (!has_row(t, s)) return;
        const DeviceProperties* dev = device[t];
        const Track& track = trace.tracks[t];
        const SliceRef ref{t, r, i};

        if (op_rows) {
          const bool on_gpu = track.kind != TrackKind::kThread;
          const std::uint32_t o = on_gpu ? operators->twin_of(ref) : operators->operator_at(ref);
          if (o != kNone) {
            const OperatorTime& op = operators->operators()[o];
            if (op_taken[o] || op.items == 0) return;  // owns no GPU work: left out
            TimeNs busy = op.busy_ns;
            double share = 1.0;
            if (clip) {
              busy = operators->busy_within(o, range_lo, range_hi);
              if (busy == 0) return;
              if (op.busy_ns > 0)
                share = static_cast<double>(busy) / static_cast<double>(op.busy_ns);
            }
            op_taken[o] = 1;
            const std::uint32_t gi = group_of_slice(t, s);
            slice_group.push_back(gi);
            slice_dur.push_back(busy);
            GroupExtra& x = extras[gi];
            x.op_times = true;
            x.busy += busy;
            x.self += static_cast<Int128>(static_cast<long double>(op.self_ns) * share);
            x.device_total +=
                static_cast<Int128>(static_cast<long double>(op.device_total_ns) * share);
            x.extent += static_cast<Int128>(static_cast<long double>(op.extent_ns) * share);
            const Slice& cpu = trace.tracks[op.slice.track].at(op.slice);
            x.cpu += cpu.dur;
            if (op.window_busy_ns) {
              x.has_window = true;
              x.window +=
                  clip ? operators->window_busy_within(o, range_lo, range_hi) : *op.window_busy_ns;
            }
            const DeviceProperties* op_dev =
                op.gpu_track < device.size() ? device[op.gpu_track] : dev;
            add_counts(gi, trace, cpu, op.metrics, op_dev, busy, share, op.flops_in_total,
                       op.flops_source, [&] { return op.precision; });
            return;
          }
        }

        TimeNs dur = s.dur;
        double share = 1.0;  // of the slice's FLOPs and bytes that fall in the range
        if (clip) {
          const TimeNs lo = std::max(s.start, range_lo);
          const TimeNs hi = std::min(s.end(), range_hi);
          if (hi < lo || (hi == lo && s.dur > 0)) return;  // touches the range only
          dur = hi - lo;
          if (s.dur > 0) share = static_cast<double>(dur) / static_cast<double>(s.dur);
        }
        const std::uint32_t gi = group_of_slice(t, s);
        slice_group.push_back(gi);
        slice_dur.push_back(dur);
        const bool own = s.metrics != kNone && s.metrics < trace.metrics.size();
        if (!own && !inherit) return;
        InheritedCounts inherited;
        if (inherit) inherited = operators->inherited(ref);
        const SliceMetrics m = own ? trace.metrics[s.metrics] : inherited.metrics;
        if (!m.has_flops() && !m.has_bytes()) return;
        const FlopsSource source = own ? own_flops_source(trace, s) : inherited.source;
        add_counts(gi, trace, s, m, dev, dur, share, true, source, [&] {
          std::string p = detail::slice_precision(trace, s);
          return p.empty() ? std::string(inherited.precision) : p;
        });
      });
}

StatsAccumulator::StatsAccumulator(GroupBy by) : impl_(std::make_unique<Impl>()) {
  impl_->by = by;
}
StatsAccumulator::StatsAccumulator(StatsAccumulator&&) noexcept = default;
StatsAccumulator& StatsAccumulator::operator=(StatsAccumulator&&) noexcept = default;
StatsAccumulator::~StatsAccumulator() = default;

void StatsAccumulator::add(const Trace& trace, const StatsQuery& query,
                           const OperatorIndex* operators) {
  impl_->add(trace, query, operators);
}

StatsResult StatsAccumulator::finish() {
  Impl& im = *impl_;
  StatsResult out;
  out.slices_considered = im.slice_dur.size();
  out.all_categories = im.all_categories;
  if (!out.all_categories) out.categories_used = std::move(im.categories);
  if (im.any_flops) out.total_flops = im.total_flops;

  // Counting sort of the durations by group: offsets from the counts, then scatter.
  const std::size_t ngroups = im.names.size();
  std::vector<std::size_t> begin(ngroups + 1, 0);
  for (std::uint32_t g : im.slice_group) ++begin[g + 1];
  for (std::size_t g = 0; g < ngroups; ++g) begin[g + 1] += begin[g];
  std::vector<TimeNs> sorted(im.slice_dur.size());
  {
    std::vector<std::size_t> cursor(begin.begin(), begin.end() - 1);
    for (std::size_t i = 0; i < im.slice_dur.size(); ++i) {
      sorted[cursor[im.slice_group[i]]++] = im.slice_dur[i];
    }
  }
  std::vector<std::uint32_t>().swap(im.slice_group);  // give the memory back early
  std::vector<TimeNs>().swap(im.slice_dur);

  out.rows.reserve(ngroups);
  Int128 total = 0;
  std::vector<Int128> group_total(ngroups, 0);
  for (std::size_t g = 0; g < ngroups; ++g) {
    for (std::size_t i = begin[g]; i < begin[g + 1]; ++i) group_total[g] += sorted[i];
    total += group_total[g];
  }
  out.total_ns = saturate(total);
  for (std::size_t g = 0; g < ngroups; ++g) {
    const std::span<TimeNs> durs(sorted.data() + begin[g], begin[g + 1] - begin[g]);
    StatsRow& r =
        out.rows.emplace_back(make_row(std::move(im.names[g]), durs, im.counts[g], im.extras[g]));
    // From the exact 128-bit totals, so the column sums to 100 even when saturated.
    r.pct = total > 0 ? static_cast<double>(100.0L * static_cast<long double>(group_total[g]) /
                                            static_cast<long double>(total))
                      : 0.0;
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const StatsRow& a, const StatsRow& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name < b.name;
  });
  const GroupBy by = im.by;
  im = Impl{};
  im.by = by;
  return out;
}

StatsResult compute_stats(const Trace& trace, const StatsQuery& query) {
  StatsAccumulator acc(query.by);
  acc.add(trace, query);
  return acc.finish();
}

}  // namespace flopline::trace
