// Metric sets per function; the rules are in function_metrics.h.
#include "flopline/capture/function_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace flopline::capture {
namespace {

bool collected(std::span<const double> values, std::uint32_t i) {
  return i < values.size() && values[i] >= 0 && std::isfinite(values[i]);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> one_pass_groups(const CounterPlan& plan,
                                                        const std::vector<std::uint32_t>& metrics,
                                                        const PassCounter& passes) {
  std::vector<std::vector<std::uint32_t>> groups;
  if (!passes) return groups;
  auto fits = [&](const std::vector<std::uint32_t>& g) {
    std::vector<std::string> names;
    for (std::uint32_t i : g) names.push_back(plan.metrics[i].name);
    return passes(names) == std::optional<std::size_t>(1);
  };
  for (std::uint32_t m : metrics) {
    bool placed = false;
    for (auto& g : groups) {
      g.push_back(m);
      if (fits(g)) {
        placed = true;
        break;
      }
      g.pop_back();
    }
    if (placed) continue;
    if (!fits({m})) return {};
    groups.push_back({m});
  }
  return groups;
}

bool measure_in_parts(std::span<const std::uint64_t> open_ages, std::uint64_t longest_return) {
  if (open_ages.size() >= kOpenPartsLimit) return false;
  if (longest_return == 0) return true;
  const auto stale = std::count_if(open_ages.begin(), open_ages.end(), [&](std::uint64_t age) {
    return age > kStaleReturns * longest_return;
  });
  return static_cast<std::size_t>(stale) < kStalePartsLimit;
}

FunctionMetrics::FunctionMetrics(const CounterPlan& plan, const PassCounter& passes,
                                 bool every_launch, bool two_pass_first)
    : plan_(plan), passes_(passes) {
  MetricSet full;
  full.what = "every metric";
  full.passes = plan_.passes;
  for (std::uint32_t i = 0; i < plan_.metrics.size(); ++i) {
    const CounterMetric& m = plan_.metrics[i];
    if (m.use == CounterUse::kTensorInstructions) {
      instructions_.push_back(i);
      continue;
    }
    if (m.use == CounterUse::kTensorInstructionType) {
      types_.push_back(i);
      continue;
    }
    full.metrics.push_back(i);
    if (!m.tensor()) base_.push_back(i);
  }
  sets_.push_back(full);
  learning_ = !every_launch && passes_ && !instructions_.empty() && plan_.passes > 1;
  if (!learning_) return;
  sets_.push_back(full);  // kLearning, set below
  set_learning();
  if (!two_pass_first) return;
  add_first_set();
  if (first_ == kLearning) return;
  // An instruction count that the first set, configured first, does not hold reads NaN
  // in every later set (IMMA on a GH100: docs/COUNTERS.md, "A two-pass first set"): no
  // set reads it.
  const auto& first = sets_[first_].metrics;
  std::erase_if(instructions_, [&](std::uint32_t i) {
    return std::find(first.begin(), first.end(), i) == first.end();
  });
  set_learning();
}

void FunctionMetrics::set_learning() {
  MetricSet learning = sets_[kFull];
  learning.what = "every metric and tensor instructions";
  learning.metrics.insert(learning.metrics.end(), instructions_.begin(), instructions_.end());
  std::sort(learning.metrics.begin(), learning.metrics.end());
  std::vector<std::string> names;
  for (std::uint32_t i : learning.metrics) names.push_back(plan_.metrics[i].name);
  learning.passes = passes_(names).value_or(0);
  sets_[kLearning] = std::move(learning);
}

std::uint32_t FunctionMetrics::type_metric(const char* type) const {
  for (const auto* list : {&types_, &instructions_}) {
    for (std::uint32_t i : *list) {
      if (plan_.metrics[i].path == type) return i;
    }
  }
  return kNoMetric;
}

std::uint32_t FunctionMetrics::hfma2_metric() const {
  for (std::uint32_t i : instructions_) {
    if (plan_.metrics[i].per_count < 0) return i;
  }
  return kNoMetric;
}

void FunctionMetrics::add_first_set() {
  const std::uint32_t required[] = {hfma2_metric(), type_metric("gmma"), type_metric("hmma")};
  for (std::uint32_t i : required) {
    if (i == kNoMetric) return;
  }
  auto passes_of = [&](const std::vector<std::uint32_t>& metrics) {
    std::vector<std::string> names;
    for (std::uint32_t i : metrics) names.push_back(plan_.metrics[i].name);
    return passes_(names);
  };
  const std::optional<std::size_t> limit = passes_of(base_);
  if (!limit) return;
  MetricSet first;
  first.metrics = base_;
  auto add = [&](std::uint32_t i) {
    first.metrics.push_back(i);
    const std::optional<std::size_t> p = passes_of(first.metrics);
    if (p && *p <= *limit) return true;
    first.metrics.pop_back();
    return false;
  };
  for (std::uint32_t i : required) {
    if (!add(i)) return;
  }
  // DMMA before IMMA: fp64 tensor operations are FLOPs, integer ones are not.
  for (const char* type : {"dmma", "imma"}) {
    if (const std::uint32_t i = type_metric(type); i != kNoMetric) add(i);
  }
  for (std::uint32_t i = 0; i < plan_.metrics.size(); ++i) {
    if (plan_.metrics[i].tensor()) add(i);
  }
  std::sort(first.metrics.begin(), first.metrics.end());
  first.passes = *limit;
  if (first.passes >= sets_[kLearning].passes) return;  // saves nothing
  first.what = "first: the tensor metrics that fit " + std::to_string(first.passes) + " passes";
  first_ = static_cast<std::uint32_t>(sets_.size());
  sets_.push_back(std::move(first));
}

std::string FunctionMetrics::learn_first(Function& f, std::span<const double> values) {
  auto again = [&](std::string why) {
    f.stage = Stage::kRelearn;
    f.why_full = why;
    first_failed_ = true;  // the six-pass set gets configured now: later functions learn so
    return why + ": learned again with every metric";
  };
  auto value = [&](std::uint32_t i) { return collected(values, i) ? values[i] : -1.0; };
  const double hfma2 = value(hfma2_metric());
  const double gmma = value(type_metric("gmma"));
  const double hmma = value(type_metric("hmma"));
  if (hfma2 < 0 || gmma < 0 || hmma < 0) {
    return again("its tensor instruction types were not read (GMMA " + fmt(gmma) + ", HMMA " +
                 fmt(hmma) + ", HFMA2 " + fmt(hfma2) + ")");
  }
  // HMMA less the HFMA2 the tensor pipe ran and less GMMA (HMMA holds both; integer GMMA
  // is IMMA's, so beside mma.sync HMMA it would understate the HMMA), and DMMA and IMMA
  // where the set holds them: tensor operations on paths the first set does not count.
  double elsewhere = std::max(0.0, hmma - hfma2 - gmma);
  for (const char* type : {"dmma", "imma"}) {
    const std::uint32_t i = type_metric(type);
    const auto& m = sets_[first_].metrics;
    if (i != kNoMetric && std::find(m.begin(), m.end(), i) != m.end()) {
      elsewhere += std::max(0.0, value(i));
    }
  }
  double ops = 0;
  std::vector<std::uint32_t> counted;
  for (std::uint32_t i : sets_[first_].metrics) {
    const CounterMetric& m = plan_.metrics[i];
    if (!m.tensor() || !collected(values, i)) continue;
    if (m.use == CounterUse::kTensorOps) ops += values[i];
    if (values[i] > 0) counted.push_back(i);
  }
  if (elsewhere > 0) {
    return again(fmt(elsewhere) + " HMMA, DMMA or IMMA instructions, which it cannot count");
  }
  if (gmma <= 0 && ops > 0) return again("tensor operations without GMMA instructions");
  if (gmma > 0 && ops <= 0) {
    return again(fmt(gmma) + " GMMA instructions without operations on the paths it counts");
  }
  std::string why_not;
  const std::uint32_t s = learned_set(counted, &why_not);
  if (s == kFull) {
    f.stage = Stage::kFull;
    f.set = kFull;
    f.why_full = why_not;
  } else {
    f.stage = Stage::kLearned;
    f.set = s;
    f.ratio = gmma > 0 ? ops / gmma : 0;
  }
  return {};  // its tensor instructions were GMMA on the paths counted, or none
}

std::uint32_t FunctionMetrics::choose(std::uint64_t function) {
  if (!learning_) return kFull;
  const auto it = functions_.find(function);
  if (it == functions_.end() || it->second.stage == Stage::kNew) return first_set();
  if (it->second.stage == Stage::kRelearn) return kLearning;
  return it->second.set;
}

std::uint32_t FunctionMetrics::learned_set(const std::vector<std::uint32_t>& tensor_metrics,
                                           std::string* why_not) {
  std::vector<std::uint32_t> metrics = base_;
  metrics.insert(metrics.end(), tensor_metrics.begin(), tensor_metrics.end());
  metrics.insert(metrics.end(), instructions_.begin(), instructions_.end());
  std::sort(metrics.begin(), metrics.end());
  for (std::uint32_t id = 0; id < sets_.size(); ++id) {
    if (id != kFull && id != kLearning && sets_[id].metrics == metrics) return id;
  }
  std::vector<std::string> names;
  for (std::uint32_t i : metrics) names.push_back(plan_.metrics[i].name);
  const std::optional<std::size_t> p = passes_(names);
  if (!p) {
    *why_not = "the profiler cannot count the passes of its metrics";
    return kFull;
  }
  if (*p >= plan_.passes) {
    *why_not = "its metrics need " + std::to_string(*p) + " passes, as many as every metric";
    return kFull;
  }
  MetricSet s;
  s.metrics = std::move(metrics);
  s.passes = *p;
  s.what = "learned:";
  for (std::uint32_t i : tensor_metrics) {
    const CounterMetric& m = plan_.metrics[i];
    if (m.use != CounterUse::kTensorOps) continue;
    s.what += " " + m.path + " " + m.precision;
  }
  if (tensor_metrics.empty()) s.what += " no tensor ops";
  const auto groups = s.passes > 1 ? one_pass_groups(plan_, s.metrics, passes_)
                                   : std::vector<std::vector<std::uint32_t>>{};
  const auto id = static_cast<std::uint32_t>(sets_.size());
  sets_.push_back(std::move(s));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    MetricSet part;
    part.metrics = groups[g];
    part.passes = 1;
    part.what =
        sets_[id].what + ", part " + std::to_string(g + 1) + " of " + std::to_string(groups.size());
    sets_.push_back(std::move(part));
    sets_[id].parts.push_back(static_cast<std::uint32_t>(sets_.size() - 1));
  }
  return id;
}

std::string FunctionMetrics::learn(std::uint64_t function, std::uint32_t id,
                                   std::span<const double> values) {
  if (id == kFull || !learning_ || id >= sets_.size()) return {};
  Function& f = functions_[function];
  if (id == first_ && first_ != kLearning) return learn_first(f, values);
  double ops = 0;
  double instructions = 0;
  bool have_instructions = !instructions_.empty();
  for (std::uint32_t i : instructions_) {
    if (!collected(values, i)) {
      have_instructions = false;
    } else {
      instructions += values[i] * plan_.metrics[i].per_count;  // less HFMA2
    }
  }
  const MetricSet& set = sets_[id];
  std::vector<std::uint32_t> counted;  // tensor metrics that counted something
  for (std::uint32_t i : set.metrics) {
    const CounterMetric& m = plan_.metrics[i];
    if (!m.tensor() || !collected(values, i)) continue;
    if (m.use == CounterUse::kTensorOps) ops += values[i];
    if (values[i] > 0) counted.push_back(i);
  }
  auto go_full = [&](std::string why) {
    f.stage = Stage::kFull;
    f.set = kFull;
    f.why_full = std::move(why);
  };
  if (id == kLearning) {
    if (!have_instructions) {
      go_full("its tensor instructions were not read");
    } else if (ops > 0 && instructions <= 0) {
      go_full("tensor operations without tensor instructions");
    } else if (ops <= 0 && instructions > 0) {
      go_full("tensor instructions without tensor operations");
    } else {
      std::string why_not;
      const std::uint32_t s = learned_set(counted, &why_not);
      if (s == kFull) {
        go_full(why_not);
      } else {
        f.stage = Stage::kLearned;
        f.set = s;
        f.ratio = instructions > 0 ? ops / instructions : 0;
      }
    }
    return {};  // every metric was collected: complete whatever was learned
  }
  // A learned set: its instructions must account for its operations.
  std::string why;
  if (!have_instructions) {
    why = "its tensor instructions were not read";
  } else if (instructions > 0 && f.ratio <= 0) {
    why = "tensor instructions (" + fmt(instructions) + ") in a function that had none";
  } else if (instructions <= 0 && ops > 0) {
    why = "tensor operations without tensor instructions";
  } else if (instructions > 0) {
    const double ratio = ops / instructions;
    if (std::fabs(ratio - f.ratio) > kRatioTolerance * f.ratio) {
      why = "tensor operations per instruction " + fmt(ratio) + ", learned " + fmt(f.ratio) +
            ": tensor work outside its learned metrics";
    }
  }
  if (!why.empty()) go_full(why);
  return why;
}

std::string FunctionMetrics::describe(std::uint64_t function) const {
  if (!learning_) return "every metric";
  const auto it = functions_.find(function);
  if (it == functions_.end() || it->second.stage == Stage::kNew) {
    return first_set() == kLearning ? "learning" : "learning in two passes";
  }
  const Function& f = it->second;
  if (f.stage == Stage::kFull) return "every metric: " + f.why_full;
  if (f.stage == Stage::kRelearn) return "learning with every metric: " + f.why_full;
  const MetricSet& set = sets_[f.set];
  std::string how = set.what + " (" + std::to_string(set.passes) + " passes";
  if (!set.parts.empty()) how += ", in " + std::to_string(set.parts.size()) + " one-pass parts";
  return how + ", " + fmt(f.ratio) + " ops per tensor instruction)";
}

std::string FunctionMetrics::unfinished(std::uint32_t id, std::size_t parts_done) const {
  if (id >= sets_.size()) return {};
  const MetricSet& set = sets_[id];
  std::vector<std::string> missing;
  for (std::size_t p = parts_done; p < set.parts.size(); ++p) {
    for (std::uint32_t i : sets_[set.parts[p]].metrics) {
      const CounterMetric& m = plan_.metrics[i];
      std::string what;
      switch (m.use) {
        case CounterUse::kSimtOps:
          what = "SIMT operations";
          break;
        case CounterUse::kTensorOps:
        case CounterUse::kTensorSparseOps:
        case CounterUse::kTensorInstructions:
        case CounterUse::kTensorInstructionType:
          what = "tensor operations";
          break;
        case CounterUse::kDramRead:
          what = "DRAM bytes read";
          break;
        case CounterUse::kDramWrite:
          what = "bytes stored";
          break;
        case CounterUse::kDuration:
          what = "replayed duration";
          break;
      }
      if (std::find(missing.begin(), missing.end(), what) == missing.end()) missing.push_back(what);
    }
  }
  std::string words;
  for (const std::string& w : missing) {
    if (!words.empty()) words += ", ";
    words += w;
  }
  return "its work ran " + std::to_string(parts_done) + " of the " +
         std::to_string(set.parts.size()) + " times its one-pass parts need: not counted: " + words;
}

}  // namespace flopline::capture
