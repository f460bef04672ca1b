// Every arg the capture writes on a slice, with its JSON type and where it appears: the
// one list the writer's keys are checked against (tests/unit/test_trace_args.cc fails on
// a written key missing here) and that docs/TRACE_FORMAT.md's "Args" table follows.
// Keys that several parts share are also named constants where they are used
// (counted_basis.h, collectives.h).
#pragma once

#include <string_view>

namespace flopline::trace {

// The keys the writer and several readers share, by name.
inline constexpr std::string_view kArgPrecision = "precision";
inline constexpr std::string_view kArgFlopsSource = "flops source";
inline constexpr std::string_view kArgCountedFlops = "counted flops";
inline constexpr std::string_view kArgCountedDramBytes = "counted dram bytes";

struct TraceArg {
  std::string_view key;
  std::string_view type;   // "uint", "int", "number", "string", "bool", "[int]", "object"
  std::string_view where;  // the slices that carry it
};

inline constexpr TraceArg kTraceArgs[] = {
    // Kernels (Kineto's names first).
    {"device", "uint", "kernel, copy, set, sync"},
    {"context", "uint", "kernel, copy, set, sync"},
    {"stream", "int", "kernel, copy, set, sync"},
    {"correlation", "uint", "kernel, copy, set, call, sync"},
    {"registers per thread", "uint", "kernel"},
    {"shared memory", "int", "kernel"},
    {"blocks per SM", "number", "kernel"},
    {"warps per SM", "number", "kernel"},
    {"grid", "[int]", "kernel"},
    {"block", "[int]", "kernel"},
    {"est. achieved occupancy %", "int", "kernel"},
    {"launch type", "string", "kernel (cooperative, not regular)"},
    {"cluster", "[int]", "kernel (cluster launch)"},
    {"graph id", "uint", "kernel, copy, set (in a CUDA graph)"},
    {"graph node id", "uint", "kernel, copy, set (in a CUDA graph)"},
    {kArgPrecision, "string", "kernel, operator"},
    // Counted and declared work (docs/COUNTERS.md, docs/NVTX.md).
    {"flops", "number", "kernel, operator"},
    {"bytes", "number", "kernel, operator, copy, set"},
    {"TFLOP/s", "number", "slices with flops"},
    {"GB/s", "number", "slices with bytes"},
    {kArgFlopsSource, "string", "kernel, operator"},
    {"counters note", "string", "kernel (estimated values)"},
    {"counters replayed", "bool", "kernel (measured)"},
    {"flops by precision", "object", "kernel (counted)"},
    {"tensor flops by path", "object", "kernel (counted)"},
    {"sparse tensor ops", "number", "kernel (counted)"},
    {"integer tensor ops", "number", "kernel (counted)"},
    {"dram bytes", "number", "kernel (counted)"},
    {"dram bytes read", "number", "kernel (counted)"},
    {"dram bytes written", "number", "kernel (counted)"},
    {kArgCountedFlops, "number", "operator (declared and counted)"},
    {kArgCountedDramBytes, "number", "operator (declared and counted)"},
    // NCCL (collectives.h).
    {"collective", "string", "NCCL kernel"},
    {"collective message bytes", "uint", "NCCL kernel"},
    {"collective calls", "uint", "NCCL kernel (a group)"},
    {"collective communicator", "string", "NCCL kernel (NCCL 2.25+)"},
    {"collective ranks", "uint", "NCCL kernel"},
    {"collective ranks source", "string", "NCCL kernel"},
    {"collective size (bytes)", "number", "NCCL kernel"},
    {"algbw (GB/s)", "number", "NCCL kernel"},
    {"busbw (GB/s)", "number", "NCCL kernel"},
    // Copies and sets (Kineto's names for peer copies).
    {"memory bandwidth (GB/s)", "number", "copy, set"},
    {"fromDevice", "uint", "peer copy"},
    {"inDevice", "uint", "peer copy"},
    {"toDevice", "uint", "peer copy"},
    {"fromContext", "uint", "peer copy"},
    {"inContext", "uint", "peer copy"},
    {"toContext", "uint", "peer copy"},
    // Calls and syncs.
    {"cbid", "uint", "runtime or driver call"},
    {"cuda_sync_kind", "string", "sync"},
    {"wait_on_cuda_event_id", "uint", "sync (event wait)"},
    // NVTX ranges and their GPU extents (docs/NVTX.md).
    {"domain", "string", "NVTX range"},
    {"category", "uint", "NVTX range"},
    {"color", "string", "NVTX range"},
    {"payload", "number", "NVTX range"},
    {"plan", "string", "NVTX range, its GPU extent"},
    {"unclosed", "bool", "NVTX range, its GPU extent (never popped)"},
    {"gpu records", "uint", "GPU extent of an NVTX range"},
    {"Sequence number", "int", "PyTorch operator range"},
    {"op_id", "uint", "PyTorch operator range"},
    {"NVTX range", "string", "ProfilerStep#N slice (--profiler-steps): the step range it marks"},
    {"Input Dims", "[[int]]", "PyTorch operator range"},
    {"Output Dims", "[[int]]", "PyTorch operator range"},
    // Capture windows (docs/CAPTURE.md, "Capture ranges").
    {"capture window", "uint", "capture window start/end instant"},
    {"reason", "string", "capture window start/end instant"},
};

// The metadata capture windows add: keys of the "flopline" object, and the top-level
// member that lists the windows (docs/TRACE_FORMAT.md, "Capture windows").
inline constexpr TraceArg kCaptureWindowMetadata[] = {
    {"capture range", "string", "flopline metadata: the options in words"},
    {"capture windows", "string",
     "flopline metadata: how many windows opened (1 in a window file)"},
    {"window file", "string",
     "flopline metadata: a file of one window (flopline launch) says which: \"window N of the "
     "run\""},
    {"captureWindows", "[object]",
     "top level: index, startNs, endNs (null while open), openedBy, closedBy"},
};

// The declaration of `key`, or null.
inline const TraceArg* find_trace_arg(std::string_view key) {
  for (const TraceArg& a : kTraceArgs) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

}  // namespace flopline::trace
