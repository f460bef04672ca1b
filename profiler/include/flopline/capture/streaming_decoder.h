// A capture decoded while the program runs, with memory bounded by what is still open
// (docs/CAPTURE.md, "While the program runs").
//
// At each append the capture hands its new records to add() (they are released from the
// capture), and take(upto) returns the trace of the events that are final at `upto`
// (records of work that ended later may still be on their way), releasing their records.
// An event is final, and written exactly once, when nothing that arrives later can change
// it. Held between appends:
//
//   - launch calls whose GPU work has not arrived or has not ended by `upto`: a call that
//     starts a kernel, copy or set (or waits, with sync records on) waits for its records
//     up to pending_limit_ns after it returned (expects_gpu_record()); a graph launch
//     until none of its kernels ended in the last graph_quiet_ns;
//   - GPU records that end after `upto`, or whose launch call waits;
//   - the markers of NVTX ranges that are not final: still open, or closed with a
//     waiting launch inside. The work they own is written as it ends, and what it adds
//     to the range is carried to the append that writes the range (merge_earlier_work());
//   - the launches inside a range not final that declared FLOPs or bytes, while it owns
//     fewer than two GPU records: a kernel carries its operator's counts when that
//     operator owns it alone;
//   - devices, thread and stream names: every append names its tracks;
//   - counter records and inferred launches not matched to their kernel yet (the newest
//     max_counter_sources inferred launches: CUPTI hands a buffer over when it is full,
//     so on a quiet device a kernel's record can come minutes after its launch), and
//     measurements kept as the sources of inferred counts (up to max_counter_sources,
//     the newest);
//   - the thread and times of launch calls written before their GPU record came (the
//     newest max_counter_sources): the record gets its flow from the call when it comes,
//     and a measured launch's replayed kernel is placed at it;
//   - NCCL calls, until the launch of the NCCL kernel that carried them is written.
//
// Every other record is released at the append that writes it, so what is held does not
// grow with the run's length. The events of all appends together are those of decode()
// on all the records (tests/unit/test_streaming_decoder.cc), except where an event
// depends on records of other appends: a "same work" launch's GPU time is compared with
// the launches of its work in its own append ("unlike its work"), an estimated count takes
// a measured launch of the same signature from its own append, a PyTorch convolution's
// output shape needs its consumer in its own append, and GPU work that arrives after its
// launch call was written (after pending_limit_ns, or a CUDA graph's kernel that came
// after a pause of more than graph_quiet_ns in its graph) has its flow but no operator.
// Busy and GPU times of a range that spans appends add up per append
// (merge_earlier_work()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/capture/records.h"
#include "flopline/trace/model.h"

namespace flopline::capture {

// upto for the append at the end of the run: everything left is final.
inline constexpr TimeNs kEndOfRun = INT64_MAX;

// Whether `call` is followed by a record that ties to it: a kernel, copy or set it
// started, or the sync record of its wait, of the kinds recorded (ActivityKindBit bits).
// False for calls that failed, were not timed, or run host functions.
bool expects_gpu_record(const ApiRecord& call, std::uint32_t kinds);

struct StreamingOptions {
  DecodeOptions decode;
  std::uint32_t kinds = kDefaultKinds;  // which records calls wait for
  // How long after a call returned its records may still come (ns).
  TimeNs pending_limit_ns = 10'000'000'000;
  // A CUDA graph's launch gives its kernels one after the other, as they end: it waits
  // until none has ended for this long (ns) before `upto`, so they go out together.
  TimeNs graph_quiet_ns = 1'000'000'000;
  std::size_t max_counter_sources = 65536;
};

// What the decoder holds between appends, by kind.
struct HeldRecords {
  std::size_t api_calls = 0, kernels = 0, memcpys = 0, memsets = 0, syncs = 0, markers = 0,
              marker_data = 0, overheads = 0, names = 0, counter_records = 0, counter_sources = 0,
              inferred_launches = 0, gpu_metric_samples = 0, nccl_calls = 0, carried_ranges = 0,
              written_calls = 0;  // calls written whose GPU record has not come yet
  // Records that belong to events not written yet (names, devices and sources aside).
  std::size_t open() const {
    return api_calls + kernels + memcpys + memsets + syncs + markers + marker_data + overheads +
           counter_records + inferred_launches + gpu_metric_samples + nccl_calls;
  }
};

class StreamingDecoder {
 public:
  explicit StreamingDecoder(StreamingOptions options = {});

  // Takes records that arrived since the last call. Its process, devices, dropped count,
  // counter and metric descriptions, rank, time base and capture windows replace those
  // held (the capture gives them whole at each append); devices and names add up.
  void add(RecordBatch&& fresh);

  // The events final at `upto` (ns; kEndOfRun at the end of the run), decoded into a
  // trace that holds only them plus the run's metadata (devices, names, "flopline"
  // info); their records are released. Call with a non-decreasing `upto`.
  trace::Trace take(TimeNs upto, DecodeResult* result = nullptr);

  HeldRecords held() const;
  // Bytes held by the records above, their strings included (an estimate).
  std::uint64_t held_bytes() const;
  // Whether any kernel, copy or set has arrived so far.
  bool gpu_work_seen() const { return gpu_work_seen_; }
  // The run's last timestamp so far (ns).
  TimeNs capture_end() const { return capture_end_; }

 private:
  StreamingOptions options_;
  RecordBatch pending_;                        // records not written yet, plus the run's metadata
  std::vector<std::uint8_t> marker_data_age_;  // per pending_.marker_data: appends unmatched
  std::vector<CounterRecord> sources_;         // measurements whose kernels were written
  StreamDecodeContext context_;                // carried ranges, contexts, pids
  std::unordered_map<std::uint32_t, TimeNs> earlier_end_;  // per device: latest end written
  // context_.written_calls in the order written (the newest max_counter_sources stay).
  std::vector<std::uint32_t> written_calls_order_;
  std::uint64_t late_records_ = 0;                    // GPU records written after their call was
  std::map<std::string, std::string> mangled_names_;  // demangled -> mangled, for the end
  TimeNs capture_end_ = 0;
  TimeNs last_upto_ = INT64_MIN;
  bool gpu_work_seen_ = false;
};

}  // namespace flopline::capture
