// Turns one process's captured records into the trace model with Kineto's conventions,
// so Perfetto, chrome://tracing, HTA and TensorBoard read flopline traces as they read
// torch.profiler's:
//
//   kernels       cat "kernel" on the GPU process (pid = device ordinal) and the stream's
//                 track (tid = stream id, thread name "stream N"); args "device",
//                 "context", "stream", "correlation", "grid", "block", "registers per
//                 thread", "shared memory" (static + dynamic bytes), "blocks per SM",
//                 "warps per SM", "est. achieved occupancy %" (occupancy.h; the last
//                 three only when the device is known), plus "launch type" and
//                 "cluster" when not a plain launch, "graph id"/"graph node id" for
//                 graph kernels. Names are demangled.
//   copies        cat "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", args "device",
//                 "context", "stream", "correlation", "bytes", "memory bandwidth (GB/s)"
//                 (bytes / ns; left out for a zero duration, where Kineto writes "N/A");
//                 peer copies use Kineto's MEMCPY2 args ("fromDevice", "inDevice",
//                 "toDevice", "fromContext", "inContext", "toContext").
//   sets          cat "gpu_memset", "Memset (Device)", args as copies.
//   API calls     cat "cuda_runtime" / "cuda_driver" on the CPU process (the batch's
//                 pid) and the call's OS thread; args "cbid", "correlation".
//   syncs         cat "cuda_sync", named "Stream Sync", "Event Sync", ... on the thread
//                 of the API call with the same correlation id; args "cuda_sync_kind",
//                 "stream", "correlation", "device", "context" (and "cuda event id").
//                 A sync whose API call was not captured goes on its stream's track of
//                 the GPU process, where Kineto puts every sync.
//   overhead      cat "overhead" ("Buffer Flush", ...) on the thread it names.
//   NVTX          see attribution.h ("user_annotation", "gpu_user_annotation").
//   flows         one "ac2g" flow (id = correlation id) from the launching API call to
//                 each kernel, copy and set it started (a graph launch: one per kernel);
//                 the launch is chosen by the flow source rule of launch_index.h.
//   metadata      process name (the batch's), labels "CPU"; GPU processes named
//                 "GPU N: <device name>", labels "GPU N", sort index 5000000 + N
//                 (Kineto's kExceedMaxPid) so they sort below the CPU process; thread
//                 names from the batch and NVTX name records; devices with their peaks.
//
// Kernels, copies and sets get SliceMetrics: bytes for copies and sets, and the FLOPs
// and bytes of their operator when it owns that one record alone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopline/capture/attribution.h"
#include "flopline/capture/records.h"
#include "flopline/trace/builder.h"

namespace flopline::capture {

// An NVTX range as a streaming capture names it across appends: its id and its start
// (ns). An id may be used again once its range has ended.
using RangeKey = std::pair<std::uint32_t, TimeNs>;

// What one append of a streaming capture (streaming_decoder.h) tells decode() besides
// its batch. The batch holds the records whose events are final now, plus context whose
// events another append writes: the markers of ranges not final yet (they own the
// launches released now), and counter records whose kernels were written before (the
// sources of inferred counts).
struct StreamDecodeContext {
  // Where a range that never ended ends: the run's last timestamp so far (ns).
  TimeNs capture_end = 0;
  // Ranges whose slices and GPU extents wait for a later append.
  std::set<RangeKey> held_ranges;
  // Per range: what the work of earlier appends added to it (attribute_operators' summary
  // of that work), merged into this append's summary (merge_earlier_work()).
  std::map<RangeKey, OperatorSummary> carry;
  // Context -> device of GPU work written before (a sync names its device by context).
  std::unordered_map<std::uint32_t, std::uint32_t> context_devices;
  // The first N counter records are sources kept from earlier appends: their kernels are
  // written already, so they are not reported as counters without their kernel.
  std::size_t context_counter_records = 0;
  // Capture window instants in (instants_after, instants_upto] only: the window list is
  // the whole run's, each instant goes out in one append.
  TimeNs instants_after = INT64_MIN;
  TimeNs instants_upto = INT64_MAX;
  // The pids of the first append, kept for the run.
  std::optional<TracePids> pids;
  // NCCL ran in an earlier append (distributedInfo names the backend).
  bool nccl_seen = false;
  // Launch calls written before their GPU record came, by correlation id: a record that
  // comes later still gets its flow from the call (and a replayed kernel its place).
  std::unordered_map<std::uint32_t, WrittenCall> written_calls;
};

struct DecodeOptions {
  bool demangle = true;                         // kernel names through the C++ ABI demangler
  bool nvtx = true;                             // NVTX ranges, instants and operator attribution
  CountOptions counts;                          // where range FLOPs may come from
  bool overhead = true;                         // CUPTI overhead slices
  const StreamDecodeContext* stream = nullptr;  // one append of a streaming capture
  // `--profiler-steps`: NVTX ranges matching this glob also get a ProfilerStep#N slice
  // (profiler_steps.h); "" none.
  std::string profiler_steps;
};

struct DecodeResult {
  TracePids pids;
  PairedMarkers markers;
  Attribution attribution;  // operators, for the summary of `flopline run`
  std::uint64_t flows = 0;
  std::uint64_t gpu_records_without_launch = 0;  // no API record with their correlation id
  std::uint64_t syncs_without_call = 0;          // placed on their stream instead
  std::uint64_t untimed_api_calls = 0;           // start = end = 0: left out
  std::uint64_t skipped_overheads = 0;           // object neither thread nor process
  // The kernels' names as demangled -> as the driver gave them, for those the decoder
  // demangled ("_Z..."): `flopline stats --names mangled` reads them back.
  std::map<std::string, std::string> mangled_names;
};

// Writes `names` (demangled -> mangled) as the trace's top-level "mangledKernelNames"
// object (docs/TRACE_FORMAT.md), replacing one there; nothing when empty.
void add_mangled_kernel_names(trace::Trace& t, const std::map<std::string, std::string>& names);

// The "flopline" metadata key that counts GPU records left out for having no times (a
// forced flush at an exit, a crash or a device reset delivers unfinished work so).
inline constexpr std::string_view kUnfinishedRecordsKey =
    "GPU records unfinished at a forced flush";
// Says that `n` such records were left out; nothing when 0.
void add_unfinished_records(trace::Trace& t, std::uint64_t n);

// Adds the batch to the builder's trace (processes, tracks, slices, flows, devices,
// report.dropped_records). Does not finalize: the caller calls builder.finalize().
DecodeResult decode(const RecordBatch& batch, trace::TraceBuilder& builder,
                    const DecodeOptions& options = {});

// decode() into a fresh, finalized trace.
trace::Trace decode_to_trace(const RecordBatch& batch, const DecodeOptions& options = {},
                             DecodeResult* result = nullptr);

}  // namespace flopline::capture
