// Loading one or more trace files off the UI thread (one std::thread per job), with
// progress the UI reads without locking, cancel, and the reader's errors
// ("FILE:LINE:COL (byte N): REASON"). The result holds the traces and everything the
// timeline needs to draw the first frame (layout, flow index).
//
// Files load one after the other (the reader already uses two threads per file). A
// file that fails does not stop the others: its error is reported and the rest load.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/args_source.h"
#include "core/counter_index.h"
#include "core/diff_table.h"
#include "core/flows.h"
#include "core/rank_summary.h"
#include "core/timeline_layout.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/operator_time.h"

namespace flopline::viewer {

struct LoadOptions {
  // kOnDemand: args stay in the file (see args_source.h); kKeep: all in memory.
  trace::ArgsMode args = trace::ArgsMode::kOnDemand;
  // Release Trace::flows once the FlowIndex is built (28 instead of 80 bytes a flow).
  bool release_model_flows = true;
  LayoutParams layout;
  // Called on each trace as soon as it is read, before anything is derived from it (the
  // app fills in device peaks, which the rank summary's utilization needs).
  std::function<void(trace::Trace&)> prepare;
  // Labels for the files, one per path (the diff's "A: ", "B: " sides); the file names
  // when empty.
  std::vector<std::string> labels;
  // Two runs compared: the first `a_paths` paths are run A's files, the others run B's;
  // the load then builds the diff table over them (core/diff_table.h).
  struct DiffSides {
    std::string a_given, b_given;  // as named on the command line
    std::size_t a_paths = 0;
    trace::GroupBy by = trace::GroupBy::kName;
  };
  std::optional<DiffSides> diff;
};

struct LoadedFile {
  std::string path;
  std::size_t input = 0;  // index of its path in the list loaded
  std::string label;      // file name without folders, for process names with several files
  trace::Trace trace;
  ArgsSource args{std::string()};
  // Which GPU work each operator owns (operator_time.h), built from the flows before
  // they are released. Refers to `trace`: a LoadedFile never moves (it is held by
  // unique_ptr).
  trace::OperatorIndex operators;
  // One min/max index per trace.counters entry, same order (counter_index.h): counter
  // tracks draw in time that follows pixels.
  std::vector<CounterIndex> counter_index;
  // Its time breakdown and NCCL kernels, taken before the flows are released.
  RankInputs ranks;
};

struct LoadResult {
  std::vector<std::unique_ptr<LoadedFile>> files;  // the files that loaded, in order
  std::vector<std::string> errors;    // one per file that failed (the reader's message)
  std::vector<std::string> warnings;  // the reader's report: skipped events, truncation
  bool cancelled = false;
  TimelineLayout layout;
  FlowIndex flows;
  std::int64_t begin_ns = 0, end_ns = 0;  // time bounds over all files
  RankSummary rank_summary;               // over all files
  std::optional<DiffTable> diff;          // with LoadOptions::diff

  // The traces as the TraceList every viewer function takes.
  std::vector<const trace::Trace*> trace_list() const;
  // The files' operator indices, in the same order.
  std::vector<const trace::OperatorIndex*> operator_list() const;
  std::uint64_t event_count() const;  // events loaded over all files
};

struct LoadProgress {
  std::uint64_t bytes_done = 0;   // of the current file's (decompressed) JSON, or while
  std::uint64_t bytes_total = 0;  // inflating, of its compressed bytes
  bool inflating = false;         // the current file is a .gz being inflated (before parsing)
  std::uint64_t events = 0;       // over all files so far
  std::uint32_t files_done = 0;
  std::uint32_t files_total = 0;
  // 0..1 over the whole job (files weighted equally).
  double fraction() const;
};

class LoadJob {
 public:
  // Starts loading at once on a new thread.
  explicit LoadJob(std::vector<std::string> paths, LoadOptions options = {});
  LoadJob(const LoadJob&) = delete;
  LoadJob& operator=(const LoadJob&) = delete;
  ~LoadJob();  // cancels and joins

  LoadProgress progress() const;  // lock-free reads of atomics
  void cancel();                  // the reader stops at its next progress call
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Waits for the thread, then hands over the result (once; later calls get an
  // empty result).
  LoadResult take();

 private:
  void run();

  std::vector<std::string> paths_;
  LoadOptions options_;
  std::atomic<std::uint64_t> bytes_done_{0}, bytes_total_{0}, events_{0}, events_before_{0};
  std::atomic<bool> inflating_{false};
  std::atomic<std::uint32_t> files_done_{0};
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  LoadResult result_;
  std::thread thread_;
};

// The same work on the calling thread (tests, --screenshot, benchmarks).
LoadResult load_files(const std::vector<std::string>& paths, const LoadOptions& options = {},
                      const trace::ReadOptions& read = {});

}  // namespace flopline::viewer
