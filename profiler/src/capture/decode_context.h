// State shared by the parts of decode() (record_decoder.cc, gpu_records.cc).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/launch_index.h"
#include "flopline/capture/nccl_calls.h"
#include "flopline/capture/record_decoder.h"

namespace flopline::capture::detail {

struct DecodeContext {
  DecodeContext(const RecordBatch& b, trace::TraceBuilder& tb, const DecodeOptions& o,
                const LaunchIndex& l)
      : batch(b), builder(tb), trace(tb.trace()), options(o), launches(l) {}

  const RecordBatch& batch;
  trace::TraceBuilder& builder;
  trace::Trace& trace;
  const DecodeOptions& options;
  const LaunchIndex& launches;
  TracePids pids;
  std::uint32_t cpu_process = 0;
  std::unordered_map<std::uint32_t, const DeviceInfo*> devices;  // by ordinal
  std::unordered_map<std::uint32_t, std::uint32_t> device_of_context;
  const Attribution* attribution = nullptr;                  // null without NVTX
  std::vector<std::uint32_t> range_metrics;                  // per range: metrics index or kNone
  std::vector<KernelCounts> kernel_counts;                   // per batch kernel
  std::vector<CountedWork> counted;                          // per batch counter record
  std::vector<std::string> attribution_precisions;           // per range: its declared precision
  std::vector<std::optional<KernelCollective>> collectives;  // per batch kernel

  const CountedWork* counted_of_kernel(std::size_t kernel) const {
    if (kernel >= kernel_counts.size() || kernel_counts[kernel].record == kNoId) return nullptr;
    return &counted[kernel_counts[kernel].record];
  }
  std::unordered_set<std::uint32_t> gpu_devices_seen;  // ordinals with a GPU process

  // A launch call an earlier append of a streaming capture wrote before this record came.
  const WrittenCall* written_call(std::uint32_t correlation_id) const {
    if (options.stream == nullptr) return nullptr;
    const auto it = options.stream->written_calls.find(correlation_id);
    return it == options.stream->written_calls.end() ? nullptr : &it->second;
  }
  std::uint32_t cpu_track(std::uint32_t thread_id) {
    return builder.track(cpu_process, static_cast<std::int64_t>(thread_id));
  }
  std::uint32_t gpu_track(std::uint32_t device, std::int64_t stream);
  std::uint32_t gpu_process(std::uint32_t device);  // the device's GPU process
  const DeviceInfo* device(std::uint32_t ordinal) const {
    const auto it = devices.find(ordinal);
    return it == devices.end() ? nullptr : it->second;
  }
};

// Kernels, copies and sets with their args, metrics and launch flows.
void emit_gpu_records(DecodeContext& ctx, DecodeResult& result);

// Counter values per kernel (ctx.kernel_counts, ctx.counted) and, per gpu_work() entry,
// the counted work that operator attribution sums.
std::vector<std::optional<WorkCount>> count_kernels(DecodeContext& ctx);

// Per batch kernel, the NCCL call(s) it carried out (ctx.collectives).
void match_collectives(DecodeContext& ctx);

// GPU metrics samples as counter series on each device's GPU process.
void emit_gpu_metrics(DecodeContext& ctx);

// What counting and sampling did, in the trace's "flopline" metadata.
void add_counter_info(DecodeContext& ctx);

// The capture windows: an instant per start and end on the CPU process, the list in
// the top-level "captureWindows" member, the setting in the "flopline" metadata.
void emit_capture_windows(DecodeContext& ctx);

// "_Z..." names through the C++ ABI demangler; others (Triton's) unchanged.
std::string demangle(const std::string& name);

}  // namespace flopline::capture::detail
