// Counter metric choice and evaluation; the rules are in counters.h.
#include "flopline/capture/counters.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace flopline::capture {
namespace {

constexpr std::string_view kTensorPrefix = "sm__ops_path_tensor_";
constexpr std::string_view kSparseOn = "_sparsity_on";
constexpr std::string_view kSparseOff = "_sparsity_off";

// One tensor-op metric name taken apart.
struct TensorName {
  std::string base;    // the whole base name
  std::string path;    // "hgmma", ...; "" for a per-type total
  std::string source;  // "bf16", "fp4_fp6_fp8", ...
  std::string dest;    // "" when the name gives none
  int sparsity = 0;    // 0: all operands, 1: sparsity_on, -1: sparsity_off
};

bool strip_suffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

std::optional<TensorName> parse_tensor_name(std::string_view name) {
  if (!name.starts_with(kTensorPrefix) || name.ends_with("_realtime")) return std::nullopt;
  TensorName t;
  t.base = std::string(name);
  std::string_view rest = name.substr(kTensorPrefix.size());
  if (rest.starts_with("op_")) {
    rest.remove_prefix(3);
    const std::size_t src = rest.find("_src_");
    if (src == std::string_view::npos) return std::nullopt;
    t.path = std::string(rest.substr(0, src));
    rest.remove_prefix(src + 1);
  }
  if (!rest.starts_with("src_")) return std::nullopt;
  rest.remove_prefix(4);
  if (strip_suffix(rest, kSparseOn)) {
    t.sparsity = 1;
  } else if (strip_suffix(rest, kSparseOff)) {
    t.sparsity = -1;
  }
  const std::size_t dst = rest.find("_dst_");
  if (dst != std::string_view::npos) {
    t.dest = std::string(rest.substr(dst + 5));
    rest = rest.substr(0, dst);
  }
  if (rest.empty()) return std::nullopt;
  t.source = std::string(rest);
  return t;
}

bool is_integer_type(std::string_view precision) {
  return precision.starts_with("int");
}

// From the metrics of one (source type, path), the ones that partition its operations:
// those with a destination type when there are any, else the one without.
std::vector<const TensorName*> partition(const std::vector<const TensorName*>& group) {
  std::vector<const TensorName*> with_dest;
  const TensorName* without = nullptr;
  for (const TensorName* t : group) {
    if (t->dest.empty()) {
      without = t;
    } else {
      with_dest.push_back(t);
    }
  }
  if (!with_dest.empty()) return with_dest;
  if (without != nullptr) return {without};
  return {};
}

void add_tensor_metrics(const std::set<std::string>& listed, const std::vector<TensorName>& tensors,
                        CounterPlan& plan) {
  // Metrics over all operands, grouped by source type and path ("" = per-type total).
  std::map<std::string, std::map<std::string, std::vector<const TensorName*>>> by_type;
  for (const TensorName& t : tensors) {
    if (t.sparsity != 0) continue;
    by_type[t.source][t.path].push_back(&t);
  }
  for (auto& [source, paths] : by_type) {
    const std::string precision = precision_of_tensor_type(source);
    if (precision.empty()) continue;
    std::vector<const TensorName*> chosen;
    for (const auto& [path, group] : paths) {
      if (path.empty()) continue;
      for (const TensorName* t : partition(group)) chosen.push_back(t);
    }
    if (chosen.empty()) {
      const auto total = paths.find("");
      if (total != paths.end()) chosen = partition(total->second);
    }
    for (const TensorName* t : chosen) {
      CounterMetric m;
      m.name = t->base + ".sum";
      m.use = CounterUse::kTensorOps;
      m.precision = precision;
      m.path = t->path.empty() ? "tensor" : t->path;
      m.integer = is_integer_type(precision);
      plan.metrics.push_back(m);
      const std::string sparse = t->base + std::string(kSparseOn);
      if (listed.count(sparse) != 0) {
        m.name = sparse + ".sum";
        m.use = CounterUse::kTensorSparseOps;
        plan.metrics.push_back(m);
      }
    }
  }
  for (const char* expected : {"fp64", "tf32", "bf16", "fp16"}) {
    const bool found =
        std::any_of(plan.metrics.begin(), plan.metrics.end(), [&](const CounterMetric& m) {
          return m.use == CounterUse::kTensorOps && m.precision == expected;
        });
    if (!found) plan.missing.push_back(std::string("tensor ") + expected + " ops");
  }
}

void add_simt_metrics(const std::set<std::string>& listed, CounterPlan& plan) {
  struct Type {
    const char* letter;
    const char* precision;
  };
  for (const Type type : {Type{"d", "fp64"}, Type{"f", "fp32"}, Type{"h", "fp16"}}) {
    for (const char* op : {"add", "mul", "fma"}) {
      const std::string tail =
          std::string("sass_thread_inst_executed_op_") + type.letter + op + "_pred_on";
      std::string name;
      for (const char* unit : {"sm__", "smsp__"}) {
        if (listed.count(unit + tail) != 0) {
          name = unit + tail;
          break;
        }
      }
      if (name.empty()) {
        plan.missing.push_back(std::string(type.precision) + " SIMT " + op);
        continue;
      }
      CounterMetric m;
      m.name = name + ".sum";
      m.use = CounterUse::kSimtOps;
      m.precision = type.precision;
      m.path = "simt";
      m.per_count = std::string_view(op) == "fma" ? 2 : 1;
      plan.metrics.push_back(m);
    }
  }
}

// Reads: the DRAM read counter. Writes: the bytes the kernel's own stores bring to L2,
// which a write-back L2 sends to DRAM, during the kernel or when evicted later. The DRAM
// write counter is not used: inside a replayed range it counts mostly write-backs of
// lines the replay itself dirtied, so a kernel that stores nothing shows megabytes
// written, while a kernel's output that stays in L2 counts as nothing (docs/COUNTERS.md,
// tests/gpu/counters/dram_probe.cu). Stores are the same in every cache state. Atomics
// and reductions to memory are left out: many of them hit one sector.
void add_dram_metrics(const std::set<std::string>& listed, CounterPlan& plan) {
  struct Choice {
    const char* base;
    double per_count;
  };
  static constexpr Choice kRead[] = {{"dram__bytes_read", 1}, {"dram__sectors_read", 32}};
  static constexpr Choice kWrite[] = {{"lts__t_sectors_srcunit_tex_op_write", 32},
                                      {"lts__t_sectors_op_write", 32}};
  auto add = [&](std::span<const Choice> choices, CounterUse use, const char* what) {
    for (const Choice& c : choices) {
      if (listed.count(c.base) == 0) continue;
      CounterMetric m;
      m.name = std::string(c.base) + ".sum";
      m.use = use;
      m.path = "dram";
      m.per_count = c.per_count;
      plan.metrics.push_back(m);
      return;
    }
    plan.missing.push_back(what);
  };
  add(kRead, CounterUse::kDramRead, "DRAM bytes read");
  add(kWrite, CounterUse::kDramWrite, "DRAM bytes written (L2 stores)");
}

// After the counting metrics, outside their pass count: measured only beside a
// function's learned metrics (function_metrics.h). The tensor pipe also executes HFMA2
// on chips that list sm__inst_executed_pipe_tensor_op_hmma_type_hfma2, in kernels with
// no tensor op at all: those are subtracted, so that the count is of matrix
// instructions. GMMA instructions are in the pipe's count (docs/COUNTERS.md, "Fewer
// replay passes", has the measurements).
void add_tensor_instruction_metrics(const std::set<std::string>& listed, bool types,
                                    CounterPlan& plan) {
  const std::string op = "sm__inst_executed_pipe_tensor_op_";
  const bool by_type = types && listed.count(op + "gmma") > 0 && listed.count(op + "hmma") > 0 &&
                       listed.count(op + "hmma_type_hfma2") > 0;
  if (by_type) {
    // The pipe's instructions as the sum of its types: after a range profiler object has
    // been configured with the types and not the pipe's total, the total reads NaN in
    // every later set (docs/COUNTERS.md, "A two-pass first set"). HMMA holds the float
    // GMMA and the HFMA2 instructions, IMMA the integer GMMA.
    struct Type {
      const char* suffix;
      const char* path;
      double per_count;
    };
    for (const Type& t : {Type{"hmma", "hmma", 1}, Type{"dmma", "dmma", 1}, Type{"imma", "imma", 1},
                          Type{"hmma_type_hfma2", "hfma2", -1}}) {
      if (listed.count(op + t.suffix) == 0) continue;
      CounterMetric m;
      m.name = op + t.suffix + ".sum";
      m.use = CounterUse::kTensorInstructions;
      m.path = t.path;
      m.per_count = t.per_count;
      plan.metrics.push_back(m);
    }
    // GMMA alone tells a two-pass first set whether the GMMA paths it counts saw all of a
    // function's tensor work.
    CounterMetric g;
    g.name = op + "gmma.sum";
    g.use = CounterUse::kTensorInstructionType;
    g.path = "gmma";
    plan.metrics.push_back(g);
    return;
  }
  if (listed.count("sm__inst_executed_pipe_tensor") == 0) return;
  CounterMetric m;
  m.name = "sm__inst_executed_pipe_tensor.sum";
  m.use = CounterUse::kTensorInstructions;
  m.path = "tensor instructions";
  plan.metrics.push_back(m);
  if (listed.count(op + "hmma_type_hfma2") == 0) return;
  m.name = op + "hmma_type_hfma2.sum";
  m.path = "hfma2";
  m.per_count = -1;
  plan.metrics.push_back(m);
}

void add_to(std::vector<std::pair<std::string, double>>& v, const std::string& key, double x) {
  for (auto& [k, total] : v) {
    if (k == key) {
      total += x;
      return;
    }
  }
  v.emplace_back(key, x);
}

void sort_largest_first(std::vector<std::pair<std::string, double>>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

}  // namespace

std::string precision_of_tensor_type(std::string_view source_type) {
  if (source_type.starts_with("tf32")) return "tf32";
  if (source_type.starts_with("bf16")) return "bf16";
  if (source_type.starts_with("fp16")) return "fp16";
  if (source_type.starts_with("fp64")) return "fp64";
  if (source_type == "fp4") return "fp4";
  // FP8 alone, or the shared FP4/FP6/FP8 path of newer chips (its peak is FP8's).
  if (source_type.find("fp8") != std::string_view::npos) return "fp8";
  if (source_type == "int8" || source_type == "int4") return std::string(source_type);
  return {};
}

std::vector<std::string> CounterPlan::names() const {
  std::vector<std::string> out;
  out.reserve(metrics.size());
  for (const CounterMetric& m : metrics) out.push_back(m.name);
  return out;
}

CounterPlan plan_counter_metrics(std::span<const std::string> chip_metrics,
                                 const PassCounter& passes, bool instruction_types) {
  const std::set<std::string> listed(chip_metrics.begin(), chip_metrics.end());
  std::vector<TensorName> tensors;
  for (const std::string& name : listed) {
    if (auto t = parse_tensor_name(name)) tensors.push_back(std::move(*t));
  }
  CounterPlan plan;
  add_tensor_metrics(listed, tensors, plan);
  add_simt_metrics(listed, plan);
  add_dram_metrics(listed, plan);
  if (listed.count("gpu__time_duration") != 0) {
    CounterMetric m;
    m.name = "gpu__time_duration.sum";
    m.use = CounterUse::kDuration;
    m.path = "time";
    plan.metrics.push_back(m);
  }
  if (!passes) {
    add_tensor_instruction_metrics(listed, instruction_types, plan);
    return plan;
  }
  // The required metrics first, then each optional one if the pass count stays.
  std::vector<CounterMetric> kept, optional;
  for (CounterMetric& m : plan.metrics) (m.optional() ? optional : kept).push_back(std::move(m));
  auto names_of = [](const std::vector<CounterMetric>& v) {
    std::vector<std::string> n;
    for (const CounterMetric& m : v) n.push_back(m.name);
    return n;
  };
  const std::optional<std::size_t> base = passes(names_of(kept));
  for (CounterMetric& m : optional) {
    std::vector<CounterMetric> trial = kept;
    trial.push_back(m);
    const std::optional<std::size_t> p = passes(names_of(trial));
    if (base && p && *p > *base) {
      plan.left_out.push_back(m.name);
    } else {
      kept = std::move(trial);
    }
  }
  plan.metrics = std::move(kept);
  plan.passes = base.value_or(0);
  add_tensor_instruction_metrics(listed, instruction_types, plan);
  return plan;
}

std::vector<GpuMetric> plan_gpu_metrics(std::span<const std::string> chip_metrics,
                                        std::vector<std::string>* missing) {
  const std::set<std::string> listed(chip_metrics.begin(), chip_metrics.end());
  struct Candidate {
    const char* base;
    const char* rollup;
    const char* label;
    double scale;
  };
  static constexpr Candidate kCandidates[] = {
      {"sm__cycles_active", ".avg.pct_of_peak_sustained_elapsed", "SM active %", 1},
      {"sm__pipe_tensor_cycles_active", ".avg.pct_of_peak_sustained_elapsed",
       "tensor pipe active %", 1},
      {"dram__bytes_read", ".sum.per_second", "DRAM read GB/s", 1e-9},
      {"dram__bytes_write", ".sum.per_second", "DRAM write GB/s", 1e-9},
  };
  std::vector<GpuMetric> out;
  for (const Candidate& c : kCandidates) {
    if (listed.count(c.base) == 0) {
      if (missing) missing->push_back(c.label);
      continue;
    }
    out.push_back({std::string(c.base) + c.rollup, c.label, c.scale});
  }
  return out;
}

std::optional<double> CountedWork::dram_bytes() const {
  if (!dram_read_bytes && !dram_write_bytes) return std::nullopt;
  return dram_read_bytes.value_or(0) + dram_write_bytes.value_or(0);
}

CountedWork evaluate_counters(const CounterPlan& plan, std::span<const double> values) {
  CountedWork w;
  const std::size_t n = std::min(plan.metrics.size(), values.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!(v >= 0) || !std::isfinite(v)) continue;  // not measured
    const CounterMetric& m = plan.metrics[i];
    const double x = v * m.per_count;
    switch (m.use) {
      case CounterUse::kTensorOps:
        if (m.integer) {
          w.int_ops += x;
          break;
        }
        w.flops += x;
        w.tensor_flops += x;
        add_to(w.flops_by_precision, m.precision, x);
        add_to(w.tensor_flops_by_path, m.path, x);
        break;
      case CounterUse::kTensorSparseOps:
        w.sparse_ops += x;
        break;
      case CounterUse::kSimtOps:
        w.flops += x;
        add_to(w.flops_by_precision, m.precision, x);
        break;
      case CounterUse::kDramRead:
        w.dram_read_bytes = w.dram_read_bytes.value_or(0) + x;
        break;
      case CounterUse::kDramWrite:
        w.dram_write_bytes = w.dram_write_bytes.value_or(0) + x;
        break;
      case CounterUse::kDuration:
        w.duration_ns = x;
        break;
      case CounterUse::kTensorInstructions:
        w.tensor_instructions = w.tensor_instructions.value_or(0) + x;
        break;
      case CounterUse::kTensorInstructionType:  // a part of the above, for learning alone
        break;
    }
  }
  std::erase_if(w.flops_by_precision, [](const auto& p) { return p.second <= 0; });
  std::erase_if(w.tensor_flops_by_path, [](const auto& p) { return p.second <= 0; });
  sort_largest_first(w.flops_by_precision);
  sort_largest_first(w.tensor_flops_by_path);
  if (!w.flops_by_precision.empty()) w.precision = w.flops_by_precision.front().first;
  return w;
}

}  // namespace flopline::capture
