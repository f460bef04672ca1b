// Hardware counters and GPU metrics samples in the decoded trace (docs/COUNTERS.md).
#include <algorithm>
#include <cstdio>
#include <string>

#include "capture/decode_context.h"

namespace flopline::capture::detail {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string seconds(TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// "13.200 s: 0.300 s configuring metric sets, 12.500 s in measured launches and their
// replays, 0.400 s decoding"
std::string measuring_time(const CounterInfo& c) {
  return seconds(c.configure_ns + c.replay_ns + c.decode_ns) + ": " + seconds(c.configure_ns) +
         " configuring metric sets, " + seconds(c.replay_ns) +
         " in measured launches and their replays, " + seconds(c.decode_ns) + " decoding";
}

}  // namespace

std::vector<std::optional<WorkCount>> count_kernels(DecodeContext& ctx) {
  const RecordBatch& b = ctx.batch;
  ctx.kernel_counts = assign_kernel_counts(b);
  ctx.counted.clear();
  ctx.counted.reserve(b.counter_records.size());
  for (const CounterRecord& r : b.counter_records) {
    ctx.counted.push_back(evaluate_counters(b.counters.plan, r.values));
  }
  std::vector<std::optional<WorkCount>> out;
  if (b.counter_records.empty()) return out;
  const auto& work = ctx.launches.gpu_work();
  out.resize(work.size());
  for (std::size_t w = 0; w < work.size(); ++w) {
    if (work[w].kind != GpuWorkKind::kKernel) continue;
    const CountedWork* c = ctx.counted_of_kernel(work[w].index);
    if (c == nullptr) continue;
    out[w] = WorkCount{c->flops, c->dram_bytes(), ctx.kernel_counts[work[w].index].basis};
  }
  return out;
}

void emit_gpu_metrics(DecodeContext& ctx) {
  const RecordBatch& b = ctx.batch;
  const GpuMetricsInfo& info = b.gpu_metrics;
  if (b.gpu_metric_samples.empty()) return;
  const trace::StringId name = ctx.trace.strings.intern("GPU metrics");
  const trace::StringId cat = ctx.trace.strings.intern("gpu_metrics");
  std::vector<trace::StringId> keys;
  for (std::size_t i = 0; i < info.names.size(); ++i) {
    keys.push_back(
        ctx.trace.strings.intern(i < info.labels.size() ? info.labels[i] : info.names[i]));
  }
  for (const GpuMetricSample& s : b.gpu_metric_samples) {
    const std::uint32_t process = ctx.gpu_process(s.device);  // where its kernels are
    for (std::size_t i = 0; i < keys.size() && i < s.values.size(); ++i) {
      ctx.builder.add_counter_point(ctx.builder.counter_series(process, name, keys[i], cat),
                                    s.start, s.values[i]);
    }
  }
}

void add_counter_info(DecodeContext& ctx) {
  const RecordBatch& b = ctx.batch;
  auto& info = ctx.trace.info;
  if (b.counters.requested) {
    const CounterInfo& c = b.counters;
    if (!c.unavailable.empty()) {
      info.emplace_back("counters", "unavailable: " + c.unavailable);
    } else {
      std::string what = "range profiler, auto range, kernel replay";
      if (!c.chip.empty()) what += ", chip " + c.chip;
      const auto instructions = static_cast<std::size_t>(
          std::count_if(c.plan.metrics.begin(), c.plan.metrics.end(), [](const CounterMetric& m) {
            return m.use == CounterUse::kTensorInstructions ||
                   m.use == CounterUse::kTensorInstructionType;
          }));
      what += ", " + std::to_string(c.plan.metrics.size() - instructions) + " metrics";
      if (c.plan.passes > 0) what += " in " + std::to_string(c.plan.passes) + " passes";
      if (instructions > 0 && c.metric_sets) {
        what +=
            " (later launches of a function: its learned tensor metrics and the "
            "others, checked by tensor instructions)";
      }
      what += c.per_signature == 0 ? ", every launch measured"
                                   : ", first " + std::to_string(c.per_signature) +
                                         (c.per_signature == 1 ? " launch" : " launches") +
                                         " of each work key measured";
      info.emplace_back("counters", what);
      info.emplace_back("counter metrics", join(c.plan.names(), ","));
      if (!c.plan.missing.empty())
        info.emplace_back("counters missing", join(c.plan.missing, ", "));
      if (!c.plan.left_out.empty())
        info.emplace_back("counters left out (extra pass)", join(c.plan.left_out, ","));
      info.emplace_back("counters measured launches", std::to_string(c.measured));
      if (!c.measured_by_passes.empty()) {
        std::string by;
        for (const auto& [passes, n] : c.measured_by_passes) {
          if (!by.empty()) by += ", ";
          by += std::to_string(n) + " in " + std::to_string(passes) +
                (passes == 1 ? " pass" : " passes");
        }
        info.emplace_back("counters measured launches by passes", by);
      }
      if (c.incomplete > 0) {
        info.emplace_back("counters incomplete measurements", std::to_string(c.incomplete));
      }
      if (const TimeNs all = c.configure_ns + c.replay_ns + c.decode_ns; all > 0) {
        info.emplace_back("counters time measuring", measuring_time(c));
      }
      if (c.per_signature != 0) {
        info.emplace_back("counters work keys", std::to_string(c.work_keys));
        info.emplace_back("counters learned argument words", std::to_string(c.learned_words));
      }
      if (!c.exclude.empty()) info.emplace_back("counters exclude", c.exclude);
      if (c.capturing > 0)
        info.emplace_back("counters launches into captured graphs", std::to_string(c.capturing));
      if (c.unread_layouts > 0) {
        info.emplace_back("counters functions without parameter layout",
                          std::to_string(c.unread_layouts));
      }
      std::vector<std::uint32_t> lost = unmatched_counter_records(b);
      if (ctx.options.stream != nullptr) {
        // Sources kept from earlier appends matched their kernels there.
        const std::size_t kept = ctx.options.stream->context_counter_records;
        std::erase_if(lost, [kept](std::uint32_t r) { return r < kept; });
      }
      if (!lost.empty()) {
        std::string ids;
        for (std::size_t i = 0; i < lost.size() && i < 8; ++i) {
          const CounterRecord& r = b.counter_records[lost[i]];
          ids +=
              (i ? ", " : "") + std::to_string(r.device) + ":" + std::to_string(r.correlation_id);
        }
        info.emplace_back("counters without their kernel",
                          std::to_string(lost.size()) + " (device:correlation " + ids + ")");
      }
      if (c.failed > 0) info.emplace_back("counters failed launches", std::to_string(c.failed));
    }
  }
  if (b.gpu_metrics.requested) {
    const GpuMetricsInfo& g = b.gpu_metrics;
    if (!g.unavailable.empty()) {
      info.emplace_back("gpu metrics", "unavailable: " + g.unavailable);
    } else {
      info.emplace_back("gpu metrics", "PM sampling every " + std::to_string(g.interval_ns) +
                                           " ns: " + join(g.names, ","));
      if (g.overflows > 0) info.emplace_back("gpu metrics overflows", std::to_string(g.overflows));
      if (g.unfinished) {
        info.emplace_back("gpu metrics unfinished",
                          "the last samples were not decoded in time (a shorter run or a longer "
                          "interval keeps them)");
      }
    }
  }
}

}  // namespace flopline::capture::detail
