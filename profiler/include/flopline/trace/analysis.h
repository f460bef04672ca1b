// Aggregates slices into per-name, per-operator or per-category rows with time
// statistics and, where slices carry FLOP and byte counts, achieved TFLOP/s, GB/s and
// % of the device's peak. Used by `flopline stats`, `flopline run` and the viewer.
// docs/STATS.md gives every formula; the comments here are the short form.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/model.h"
#include "flopline/trace/operator_time.h"
#include "flopline/trace/slice_terms.h"

namespace flopline::trace {

// What a row is. The words, labels, default categories and row keys of each are in
// stats_schema.h's table of groupings.
enum class GroupBy { kName, kOperator, kCategory, kStream, kDevice };

struct StatsQuery {
  GroupBy by = GroupBy::kName;
  // Categories to include; empty = the default for `by` (see default_categories).
  // Matching is ASCII case-insensitive, and a slice whose cat is a comma-separated
  // list ("a,b", Chrome's convention) matches when any element matches.
  std::vector<std::string> categories;
  // true: every category, whatever `categories` and the default say.
  bool all_categories = false;
  // Only slices whose start lies in [range_begin, range_end) (absolute ns). A slice
  // that starts inside the range counts in full, even when it ends after range_end.
  std::optional<TimeNs> range_begin;
  std::optional<TimeNs> range_end;
  // false: the rule above (`flopline stats --range`). true: every slice that overlaps
  // [range_begin, range_end) counts, with its duration clipped to the range and its
  // FLOPs, bytes and attainable time scaled by the share kept (the viewer's ruler-drag
  // range). A zero-length slice overlaps when it lies in [range_begin, range_end).
  bool clip_to_range = false;
};

struct StatsRow {
  std::string name;  // the row's key: slice name, category, "GPU 0 stream 7" (stats_schema.h)
  std::uint64_t count = 0;
  TimeNs total_ns = 0;   // sum of durations (saturates at INT64_MAX)
  TimeNs avg_ns = 0;     // total / count, rounded to nearest (halves up)
  TimeNs median_ns = 0;  // exact; even counts: mean of the two middle values, rounded down
  TimeNs min_ns = 0;
  TimeNs max_ns = 0;
  TimeNs std_ns = 0;             // population standard deviation, rounded to nearest
  double pct = 0;                // share of the summed time of all rows, 0..100
  std::optional<double> flops;   // summed over instances that carry flops
  std::optional<double> bytes;   // summed over instances that carry bytes
  std::optional<double> tflops;  // flops / time of the instances that carry flops (TFLOP/s)
  std::optional<double> gbps;    // bytes / time of the instances that carry bytes (GB/s, 1e9)
  // 100 * (time the instances would take at their roofline-attainable rate) / (time they
  // took), over the instances whose attainable rate is known. See docs/STATS.md.
  std::optional<double> pct_peak;
  // The precision of the instances that carry FLOPs ("bf16"), "mixed" when they used
  // several, "" when none had one.
  std::string precision;
  // Where those FLOPs came from: "trace", "shapes", "nested", "counters", "mixed", ""
  // (operator_time.h).
  std::string flops_source;
  // FLOP per byte (arithmetic intensity): flops / bytes, when both are known.
  std::optional<double> intensity;
  // Over the instances that declared FLOPs and also carry the counters' count of them
  // (flopline's "counted flops"): the counted sum, and how far the declared sum is from
  // it, 100 * (declared - counted) / counted. flops_disagree() flags the row.
  std::optional<double> counted_flops;
  std::optional<double> declared_vs_counted_pct;
  // Operator rows whose operators own GPU work (GroupBy::kOperator; operator_time.h),
  // summed over the instances; nullopt for other rows. Their time columns (total_ns,
  // avg_ns ...) are then each instance's busy time, so busy_ns equals total_ns.
  std::optional<TimeNs> busy_ns;
  std::optional<TimeNs> self_ns;          // GPU work launched directly inside them
  std::optional<TimeNs> device_total_ns;  // sum of the durations of all their GPU work
  std::optional<TimeNs> extent_ns;        // first start to last end of their GPU work
  std::optional<TimeNs> cpu_ns;           // their own slices' durations (CPU time)
  // Top-level ranges: the GPU busy time of everything their process launched, from any
  // thread, while they were open (operator_time.h), summed over those instances;
  // nullopt for rows with none.
  std::optional<TimeNs> window_busy_ns;
};

// Declared FLOPs further than this from the counters' (in %) are flagged.
inline constexpr double kFlopsDisagreementPct = 5.0;
// True when the row's declared FLOPs differ from the counted ones by more than
// kFlopsDisagreementPct.
bool flops_disagree(const StatsRow& r);

struct StatsResult {
  std::vector<StatsRow> rows;           // sorted by total_ns descending, then name (bytewise)
  TimeNs total_ns = 0;                  // sum of the rows' totals
  std::uint64_t slices_considered = 0;  // slices that matched (= sum of row counts)
  // The category filter that was applied. Empty with all_categories = true when every
  // slice was taken regardless of category.
  std::vector<std::string> categories_used;
  bool all_categories = false;
  // FLOPs over all rows, nested operators' FLOPs counted once (operator_time.h's
  // flops_in_total); nullopt when no row has FLOPs.
  std::optional<double> total_flops;
};

// The categories used when StatsQuery::categories is empty. An empty vector means
// every category. Each grouping's rule is its entry's default_categories
// (stats_schema.h):
//   kName:     {"kernel"} when any slice matches "kernel", else every category.
//   kOperator: {"user_annotation", "cpu_op", "operator"}: the operators on their CPU
//              threads ("Operator" is the 2021 Kineto schema's cpu_op); their time is
//              the GPU time of the work they own (operator_time.h), or their CPU time
//              in a trace where no operator owns GPU work. A trace with none of them
//              but "gpu_user_annotation" slices (GPU extents only) gets those.
//   kCategory: every category.
//   kStream, kDevice: the GPU's work, {"kernel", "gpu_memcpy", "gpu_memset"}.
// The several-trace form applies the rule to all of them together, so several files
// are always filtered the same way.
std::vector<std::string> default_categories(const Trace& trace, GroupBy by);
std::vector<std::string> default_categories(std::span<const Trace* const> traces, GroupBy by);

// The same rule for files read one at a time (a summary over many files keeps none):
// note each trace, then ask. choices() lists every answer the rule can give for `by`,
// so that each trace can be added to a StatsAccumulator per choice before the answer is
// known.
class DefaultCategories {
 public:
  explicit DefaultCategories(GroupBy by);
  void note(const Trace& trace);
  std::vector<std::string> categories() const;
  std::vector<std::vector<std::string>> choices() const { return choices_; }

 private:
  std::vector<std::vector<std::string>> choices_;
  std::vector<bool> seen_;  // per choice: some slice matched one of its categories
};

// category_matches and normalize_precision: flopline/trace/slice_terms.h.

// The raw bandwidth of one direction of the link between a device and its host (bytes/s),
// from the device's part: PCIe 3.0/4.0/5.0 x16 by compute capability (7.x, 8.x, 9.0),
// NVLink-C2C for GH200/GB200. 0 when unknown. Host<->device copies are compared with it.
double host_link_bytes_per_s(const DeviceProperties& device);

// Aggregates one or more traces into one table: rows of the same name (or category)
// from different traces merge, durations included, so medians stay exact.
class StatsAccumulator {
 public:
  explicit StatsAccumulator(GroupBy by);
  StatsAccumulator(StatsAccumulator&&) noexcept;
  StatsAccumulator& operator=(StatsAccumulator&&) noexcept;
  ~StatsAccumulator();

  // Adds the slices of `trace` selected by `query`. query.by is ignored (the
  // accumulator's grouping wins). Empty query.categories means default_categories(trace).
  // Operator rows and kernels' inherited counts come from `operators`, built here when
  // not given (give it when the trace's flows were released, as the viewer does).
  //
  // GroupBy::kOperator, when some operator owns GPU work: an operator instance counts
  // with its busy time (StatsQuery's range applies to its slice's start; with
  // clip_to_range, to its GPU work, clipped); an operator that owns no GPU work is left
  // out; a gpu_user_annotation slice counts as its CPU twin (once per operator). Other
  // slices count with their own durations. GroupBy::kName: GPU work without counts
  // takes what it inherits (operator_time.h). See docs/STATS.md.
  void add(const Trace& trace, const StatsQuery& query, const OperatorIndex* operators = nullptr);
  // Builds the rows. The accumulator is left empty.
  StatsResult finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One trace, one query: StatsAccumulator(query.by).add(trace, query).finish().
StatsResult compute_stats(const Trace& trace, const StatsQuery& query);

}  // namespace flopline::trace
