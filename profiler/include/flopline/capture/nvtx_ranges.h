// NVTX marker records paired into ranges and instants, with their FLOP and byte counts.
//
// Pairing: a start record (push or start) opens range `id`; the end record with the same
// id closes it. Push/pop ranges nest on their thread; start/end ranges may overlap and
// may end on another thread (they stay on the thread that started them). A range still
// open when the capture ended runs to the capture's last timestamp and is marked
// unclosed; an end with no start is counted and dropped. Instant markers (nvtxMark)
// become instants. Markers whose object is not a thread or process (rare) are counted
// and dropped. MarkerDataRecords (color, category, payload) are merged by id into start
// and instant markers that carry no data of their own.
//
// Counts: a valid message suffix first, then the payload (FLOPs), then PyTorch
// emit_nvtx names (see nvtx_flops.h and torch_nvtx.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flopline/capture/records.h"
#include "flopline/trace/model.h"

namespace flopline::capture {

// Where a range's counts came from.
enum class CountSource : std::uint8_t { kNone, kSuffix, kPayload, kTorchShapes };
const char* to_string(CountSource s);

struct NvtxMarkerData {
  std::string domain;
  bool has_color = false;
  std::uint32_t color = 0;  // ARGB
  std::uint32_t category = 0;
  PayloadKind payload_kind = PayloadKind::kNone;
  std::uint64_t payload_u64 = 0;
  std::int64_t payload_i64 = 0;
  double payload_f64 = 0;
};

struct NvtxRange {
  std::uint32_t id = 0;
  std::uint32_t thread_id = 0;  // OS thread that started it
  TimeNs start = 0;             // ns
  TimeNs end = 0;               // ns
  bool unclosed = false;        // no end record: end is the capture's last timestamp
  std::string message;          // as the program gave it
  std::string name;             // shown in the trace: suffix stripped, torch fields moved to args
  NvtxMarkerData data;
  trace::SliceMetrics metrics;  // flops / bytes, -1 when unknown
  std::string precision;        // from the suffix ("tf32"); empty when not given
  std::string plan;             // from the suffix: the code path that ran; empty when not given
  CountSource count_source = CountSource::kNone;
  // PyTorch emit_nvtx fields, when the message was one.
  bool from_torch = false;
  std::optional<std::int64_t> torch_seq;
  std::optional<std::uint64_t> torch_op_id;
  std::string torch_sizes;   // "[[128, 64], [64, 32]]"
  std::string torch_output;  // "[128, 32]" when known
};

struct NvtxInstant {
  std::uint32_t thread_id = 0;
  TimeNs ts = 0;  // ns
  std::string name;
  NvtxMarkerData data;
};

struct CountOptions {
  bool payload_is_flops = true;  // rule 2 of nvtx_flops.h
  bool torch_shapes = true;      // rule 3
};

struct PairedMarkers {
  std::vector<NvtxRange> ranges;  // sorted by (thread, start, longer first)
  std::vector<NvtxInstant> instants;
  std::uint64_t unmatched_ends = 0;
  std::uint64_t unclosed_ranges = 0;
  std::uint64_t skipped_markers = 0;  // object neither a thread nor a process
};

// `capture_end` closes ranges that never ended (ns).
PairedMarkers pair_markers(const RecordBatch& batch, TimeNs capture_end,
                           const CountOptions& options = {});

}  // namespace flopline::capture
