// Which of a counter plan's metrics a measured launch collects (docs/COUNTERS.md, "Fewer
// replay passes"). Pure: used by the capture under its lock and tested without a GPU.
//
// Every metric of the plan costs replay passes (five on a GH100), and each pass replays
// the kernel and restores the device memory it may write. Most of those passes serve the
// tensor-op metrics, one group of types at a time, while a function's tensor
// instructions are fixed when it is compiled: a bf16 GEMM never issues tf32 or fp64 MMAs.
// So a function's tensor types are learned once and later launches measure only those:
//
//   first     a set of many passes, once configured on the range profiler, makes every
//             later measurement as dear as it is (docs/COUNTERS.md, "Where a
//             measurement's time goes"). So the first measured launch of a function
//             collects the metrics without tensor ops, the tensor instructions by type
//             (GMMA; HMMA, which holds float GMMA and HFMA2; DMMA; IMMA, which holds
//             integer GMMA, where it fits)
//             and every tensor path that fits the same passes: two on a GH100, every
//             float GMMA path dense and sparse (host pass counts). An instruction count
//             it cannot hold is read by no set: once the first set is configured, a
//             count it lacks reads NaN in every later set. Complete when every tensor
//             instruction was GMMA on those paths, or none ran (HFMA2 is SIMT work); it
//             learns T and r as below, r per GMMA instruction. Otherwise the launch is
//             incomplete, the function is learned again at its next launch, and every
//             new function from then on learns with the learning set (the object holds
//             its passes by then: nothing is saved any more).
//             FLOPLINE_COUNTERS_FIRST_SET=learning starts every function with the
//             learning set instead.
//   learning  the first measured launch of a function collects every counting metric
//             and the tensor-instruction metrics (kTensorInstructions). It learns the
//             tensor metrics that counted something (T) and the ratio of their
//             operations to the tensor instructions executed (r).
//   learned   later launches collect the plan's other metrics (SIMT FLOPs, DRAM bytes,
//             duration: all of them, every time), T and the tensor instructions. Two
//             passes for most functions on a GH100. The launch is complete when its
//             instructions account for its counted operations: no tensor instructions
//             (then no tensor work at all), or T's operations per instruction within
//             kRatioTolerance of r. Otherwise it did tensor work outside T (another type,
//             a sparse instruction, another instruction path): the launch is incomplete,
//             and its function is measured with every metric from then on.
//   full      every counting metric, no check needed: `--counters=all` (the reference
//             stays independent of learning), functions whose learned set would not save
//             a pass, functions whose tensor instructions and operations do not go
//             together (operations with no instructions: the instruction metric misses
//             that path; instructions with no operations: the tensor pipe ran something
//             that is not a counted tensor op, on a chip that cannot tell HFMA2 apart),
//             and functions that failed a check.
//
// Metric sets are shared by every function that learned the same T.
//
// One-pass parts. A measurement that needs more than one pass replays the kernel, and
// kernel replay saves and restores the device memory the process holds: a fixed cost
// per measured launch that grows with the memory held (about 26 ms plus 3.3 ms per GiB
// on an H200), while a one-pass measurement costs well under a millisecond at any
// memory held (bench/counters_pass_cost.cu). So a learned set is also cut into groups
// that each fit one pass (its parts): a key whose function has learned its set is
// measured one part per launch over its next launches, which do the same work by the
// key's definition (launch_work.h), and the parts' values together are the
// measurement. Learning and `full` measurements stay one replayed launch: they must be
// complete at once. A function whose keys do not come back (measure_in_parts) has its
// new keys measured in one replayed launch too.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "flopline/capture/counters.h"

namespace flopline::capture {

struct MetricSet {
  std::vector<std::uint32_t> metrics;  // indices into CounterPlan::metrics, ascending
  std::size_t passes = 0;              // 0 when not known
  std::string what;                    // "every metric", "learned: hgmma bf16->fp32", ...
  // Sets of one pass each whose metrics together are `metrics`, in the order they are
  // measured; empty: measured in one launch (replayed when passes > 1).
  std::vector<std::uint32_t> parts;
};

// Operations per tensor instruction of two launches of one function agree within this
// fraction of the learned ratio.
inline constexpr double kRatioTolerance = 0.01;

// Cuts `metrics` (plan indices) into groups of one pass each, first fit in their order:
// `one_pass(names)` says whether the names fit one pass. Empty when a metric needs more
// than one pass alone or the passes cannot be counted.
std::vector<std::vector<std::uint32_t>> one_pass_groups(const CounterPlan& plan,
                                                        const std::vector<std::uint32_t>& metrics,
                                                        const PassCounter& passes);

// Whether a new key of a function is measured in parts (true) or in one replayed launch.
// `open_ages` are the function's unfinished measurements in parts, each as the number
// of the function's launches since its key last ran a part; `longest_return` the most
// launches of the function any of its keys took to come back for its next part (0: none
// has come back yet). A measurement is stale when it has waited more than
// kStaleReturns times that: its key does not come back as the others do (an inference
// loop whose sequence length changes at every call). Parts, unless kStalePartsLimit
// measurements are stale or kOpenPartsLimit are open at all. Counted in the function's
// own launches, not in time: a training loop's first steps compile for seconds.
inline constexpr std::uint64_t kStaleReturns = 2;
inline constexpr std::size_t kStalePartsLimit = 2;
inline constexpr std::size_t kOpenPartsLimit = 64;
bool measure_in_parts(std::span<const std::uint64_t> open_ages, std::uint64_t longest_return);

// Not thread-safe: the caller serializes every call.
class FunctionMetrics {
 public:
  // `every_launch` (--counters=all): every launch collects every counting metric.
  // Without tensor-instruction metrics in the plan or a way to count passes, every
  // launch does too.
  // `two_pass_first`: a function's first measurement in the two-pass first set where the
  // plan allows one (FLOPLINE_COUNTERS_FIRST_SET=learning turns it off).
  FunctionMetrics(const CounterPlan& plan, const PassCounter& passes, bool every_launch,
                  bool two_pass_first = false);

  // The set a launch of `function` collects (an index for set()).
  std::uint32_t choose(std::uint64_t function);
  const MetricSet& set(std::uint32_t id) const { return sets_[id]; }
  std::size_t set_count() const { return sets_.size(); }

  // What a measurement of `function` with set `id` gave (`values` parallel to the plan's
  // metrics, negative where not collected): "" when it is complete, else why not. Learns.
  std::string learn(std::uint64_t function, std::uint32_t id, std::span<const double> values);

  // How `function` is measured now, in words, for FLOPLINE_COUNTERS_DEBUG.
  std::string describe(std::uint64_t function) const;
  // The words for an unfinished measurement in parts of set `id` that collected
  // `parts_done` of its parts: what it did not count.
  std::string unfinished(std::uint32_t id, std::size_t parts_done) const;

  static constexpr std::uint32_t kFull = 0;      // every counting metric
  static constexpr std::uint32_t kLearning = 1;  // every metric, instructions too
  // The set a new function's first measurement collects.
  std::uint32_t first_set() const {
    return !learning_ ? kFull : first_failed_ ? kLearning : first_;
  }

 private:
  enum class Stage : std::uint8_t { kNew, kRelearn, kLearned, kFull };
  struct Function {
    Stage stage = Stage::kNew;
    std::uint32_t set = kFull;
    double ratio = 0;  // tensor operations per tensor instruction (0: no tensor work)
    std::string why_full;
  };
  std::uint32_t learned_set(const std::vector<std::uint32_t>& tensor_metrics, std::string* why_not);
  static constexpr std::uint32_t kNoMetric = ~0u;
  std::uint32_t type_metric(const char* type) const;  // instructions of `type` (path)
  std::uint32_t hfma2_metric() const;
  void set_learning();  // sets_[kLearning]: every metric and instructions_
  void add_first_set();
  std::string learn_first(Function& f, std::span<const double> values);

  CounterPlan plan_;
  PassCounter passes_;
  bool learning_ = false;
  std::vector<std::uint32_t> base_;  // counting metrics that are not tensor ops
  std::vector<std::uint32_t> instructions_;
  std::vector<std::uint32_t> types_;  // kTensorInstructionType metrics
  std::uint32_t first_ = kLearning;   // the two-pass first set, where there is one
  // A first measurement needed the six-pass set: configured once, it makes every later
  // measurement as dear, so new functions learn with it from then on.
  bool first_failed_ = false;
  std::vector<MetricSet> sets_;
  std::unordered_map<std::uint64_t, Function> functions_;
};

}  // namespace flopline::capture
