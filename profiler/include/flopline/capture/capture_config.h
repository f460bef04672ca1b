// What a capture records and where it writes, as `flopline run`, the injection library
// and flopline::Session all understand it. Plain C++ (no CUDA) so the command line and
// the environment are parsed and tested on machines without a GPU. docs/CAPTURE.md
// documents every variable and name.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/capture_window.h"

#include "flopline/capture/api_names.h"

namespace flopline::capture {

// Groups of CUPTI activity kinds, as one bit each.
enum ActivityKindBit : std::uint32_t {
  kKindKernel = 1u << 0,    // CONCURRENT_KERNEL
  kKindMemcpy = 1u << 1,    // MEMCPY and MEMCPY2 (peer to peer)
  kKindMemset = 1u << 2,    // MEMSET
  kKindRuntime = 1u << 3,   // RUNTIME (cuda* calls)
  kKindDriver = 1u << 4,    // DRIVER (cu* calls: how Triton and cuBLAS launch)
  kKindSync = 1u << 5,      // SYNCHRONIZATION
  kKindNvtx = 1u << 6,      // MARKER and MARKER_DATA
  kKindName = 1u << 7,      // NAME (nvtxNameOsThread, ...)
  kKindOverhead = 1u << 8,  // OVERHEAD
  // Runtime and driver calls that only ask something (cudaGetDevice, cuGetProcAddress,
  // cuDeviceGetAttribute, ...; is_query_api()). PyTorch makes several per operator, and
  // recording them costs as much as the launch itself, so they are left out unless asked
  // for.
  kKindQueries = 1u << 9,
  // Runtime and driver calls that launch, copy, set, allocate, free or synchronize
  // (is_recorded_call()), recorded through CUPTI *callbacks* on just those functions
  // instead of RUNTIME/DRIVER activity records, which instrument every call: the same
  // launch sites and flows at a fraction of the cost (docs/CAPTURE.md). For a domain
  // whose activity kind (runtime, driver) is also asked for, the activity records win.
  kKindCalls = 1u << 10,
};
// Every CUPTI activity kind (calls are their callback-based stand-in, not included).
inline constexpr std::uint32_t kAllKinds = (1u << 10) - 1;
// Kernels, copies, sets, NVTX, names, overhead, and the calls that matter through
// callbacks. Not SYNCHRONIZATION: on a PyTorch loop it costs about as much per operator
// as everything else together (docs/PERFORMANCE.md, capture overhead), and the synchronizing
// calls themselves (cudaDeviceSynchronize, cudaStreamSynchronize, ...) are among the calls
// recorded, with their durations.
inline constexpr std::uint32_t kDefaultKinds =
    (kAllKinds & ~(kKindQueries | kKindRuntime | kKindDriver | kKindSync)) | kKindCalls;

// Parses a comma-separated list of kind names (docs/CAPTURE.md): kernel, memcpy, memset,
// runtime, driver, sync, nvtx, name, overhead, queries, calls; the groups "default",
// "all" (every activity kind, every call recorded) and "api" (runtime + driver); CUPTI's own names
// in any case (CONCURRENT_KERNEL, MEMCPY2, MARKER, MARKER_DATA, SYNCHRONIZATION). An item "-NAME"
// removes kinds
// ("all,-overhead"); a list that starts with a removal starts from the default set. On error:
// nothing, and `error` says which item is unknown.
std::optional<std::uint32_t> parse_activity_kinds(std::string_view list, std::string* error);
// "kernel,memcpy,..." in the canonical order; "all" for kAllKinds, "default" for
// kDefaultKinds, "none" for 0.
std::string activity_kinds_to_string(std::uint32_t kinds);

// Looks up an environment variable; null when unset. Tests pass a map.
using GetEnv = std::function<const char*(const char*)>;

// The process's rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID (the
// first set and non-empty, in that order); nothing when none is.
std::optional<std::string> process_rank(const GetEnv& getenv);

// The job's rank count from WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS
// (the first set, in that order), when it is a whole number from 1 to 2^20.
std::optional<std::uint32_t> job_world_size(const GetEnv& getenv);

// Whether `--counters` flushes CUPTI with force after each measured launch
// (docs/COUNTERS.md, "Measured agreement and cost"): FLOPLINE_COUNTERS_FORCED_FLUSH "0"
// never, any other value always; unset, only while the process has launched into one
// context (a forced flush hands over another context's running work without times).
bool counters_forced_flush(const GetEnv& getenv, bool several_contexts);

// The process's rank (process_rank) when it is a whole number below 2^20.
std::optional<std::uint32_t> numeric_rank(const GetEnv& getenv);
// FLOPLINE_TIME_BASE_NS, set by `flopline run` for every process it starts: a positive
// whole number of nanoseconds on the capture clock.
std::optional<std::int64_t> run_time_base(const GetEnv& getenv);

// Expands an output template: %p -> pid, %r -> rank (the pid when there is no rank),
// %% -> %. Any other %X is kept as written.
std::string expand_output_template(std::string_view templ, std::int64_t pid,
                                   const std::optional<std::string>& rank);

// The file name used when FLOPLINE_OUTPUT is unset or names a directory:
// "flopline-%p.json", or "flopline-rank%r.json" when a rank variable is set.
std::string default_output_name(const std::optional<std::string>& rank);

// The path this process writes to. `output` is FLOPLINE_OUTPUT (may be empty): a file
// template, or a directory when it ends in '/' or `is_directory(output)` says so.
std::string output_path_for_process(std::string_view output, std::int64_t pid,
                                    const std::optional<std::string>& rank,
                                    const std::function<bool(const std::string&)>& is_directory);

// Hardware counters per kernel (docs/COUNTERS.md): off, or the first N launches of
// each work key measured (launch_work.h; 0 = every launch).
inline constexpr std::uint32_t kDefaultCountersPerSignature = 1;
struct CountersSetting {
  bool on = false;
  std::uint32_t per_signature = kDefaultCountersPerSignature;
};
// "on", "1", "true", "yes" -> the default N; "N" (a whole number >= 1) -> N launches per
// signature; "all" -> every launch; "off", "0", "false", "no", "" -> off. Nothing, with
// `error` set, for anything else.
std::optional<CountersSetting> parse_counters(std::string_view text, std::string* error);

// GPU metrics over time (docs/COUNTERS.md): off, or PM sampling at an interval.
struct GpuMetricsSetting {
  bool on = false;
  std::int64_t interval_ns = 100000;
};
inline constexpr std::int64_t kMinGpuMetricsIntervalNs = 10000;     // 10 us
inline constexpr std::int64_t kMaxGpuMetricsIntervalNs = 10000000;  // 10 ms
// "on", "1", ... -> 100 us; an interval with its unit ("20us", "0.5ms", "50000ns") from
// 10 us to 10 ms; "off", "0", ... -> off. Nothing, with `error` set, otherwise.
std::optional<GpuMetricsSetting> parse_gpu_metrics(std::string_view text, std::string* error);

// The path a process of a `flopline run` writes. Directories and templates with %p or
// %r give each process its own name already (output_path_for_process). A plain file
// path belongs to the command's own process; any other process of the run writes
// beside it, its rank or pid as suffix ("t-rank1.json", "t-4711.json"), and `flopline
// run` gives the plain path to the first of them when the command's own process did
// no GPU work. Outside a run (`in_run` false) the plain path is taken as it is.
std::string run_output_path(std::string_view output, std::int64_t pid,
                            const std::optional<std::string>& rank, bool is_command_process,
                            bool in_run,
                            const std::function<bool(const std::string&)>& is_directory);

// How often the trace reaches its file while the program runs (FLOPLINE_FLUSH_INTERVAL):
// an interval with its unit ("5s", "500ms", "2m") from 100 ms to 1 hour, or "off" / "0".
// Nothing, with `error` set, for anything else.
inline constexpr std::int64_t kDefaultFlushIntervalNs = 5'000'000'000;
std::optional<std::int64_t> parse_flush_interval(std::string_view text, std::string* error);

// How long after an append ends the next may start: `interval_ns` (0: as soon as records
// call for one), and never sooner than four times what the last append took. Each append
// decodes everything captured so far, so on a long run appends grow longer; this keeps
// their thread to at most a fifth of a core.
std::int64_t next_append_wait_ns(std::int64_t interval_ns, std::int64_t last_append_ns);

// The largest memory cap the capture takes, in MB (2^40 MB; MB << 20 still fits 64 bits).
inline constexpr std::uint64_t kMaxMemoryMb = 1ull << 40;

// ---- the capture options: how each front end spells them --------------------------

// Every setting a capture takes: `flopline run`'s options, the variables the injection
// library reads, flopline::SessionOptions' members. The last ones are set by `flopline
// run` for each process it starts (or by hand), with no option of their own.
enum class CaptureOptionId : std::uint8_t {
  kOutput,
  kKinds,
  kMaxMemory,  // in MB
  kCounters,
  kCountersExclude,
  kGpuMetrics,
  kFlushInterval,
  kCaptureRange,
  kNvtxCapture,
  kCaptureRangeEnd,
  kDelay,
  kDuration,
  kProfilerSteps,
  kSelfTiming,
  kQuiet,
  kManifest,
  kRunId,
  kRunPid,
  kTimeBase,
  kControlDir,
};
inline constexpr std::size_t kCaptureOptionCount = 20;

struct CaptureOption {
  CaptureOptionId id;
  std::string_view env;             // the variable: "FLOPLINE_KINDS" (a literal, so NUL-terminated)
  std::string_view cli;             // `flopline run`'s option: "--kinds"; "" = none
  std::string_view session;         // flopline::SessionOptions' member: "kinds"; "" = none
  std::string_view example;         // a value every front end takes, alone (tests use it)
  std::string_view cli_short = {};  // "-o"
  // The value of the option given without one ("--counters" = "--counters=on"); "" = the
  // option needs a value.
  std::string_view bare = {};
  // Set by `flopline run` for every process it starts, whatever its options.
  bool by_run = false;
  // What the injection library does instead when the variable's value cannot be used
  // ("counters are off"); "" = it never warns.
  std::string_view fallback = {};
};

// Every option, in the order `flopline run --help` and docs/CAPTURE.md list them.
// docs/CAPTURE.md documents each; tests/unit/test_capture_options.cc checks the docs,
// the command line and SessionOptions against this table.
std::span<const CaptureOption> capture_options();
const CaptureOption& capture_option(CaptureOptionId id);

// Who gives the options; each spells them its own way, and its messages say them so.
enum class CaptureFrontEnd : std::uint8_t { kCommandLine, kEnvironment, kSession };
// "--kinds", "FLOPLINE_KINDS", "kinds"; "" where the front end has no such option.
std::string_view capture_option_name(CaptureOptionId id, CaptureFrontEnd front);
// The capture-window options' names for parse_capture_window_setting's messages.
CaptureWindowOptionNames capture_window_names(CaptureFrontEnd front);

// Every option's value as given, by option ("" = not given: the default).
struct CaptureOptionValues {
  std::array<std::string, kCaptureOptionCount> text;
  std::string& operator[](CaptureOptionId id) { return text[static_cast<std::size_t>(id)]; }
  const std::string& operator[](CaptureOptionId id) const {
    return text[static_cast<std::size_t>(id)];
  }
};
// The values of every option's variable (unset = "").
CaptureOptionValues capture_values_from_env(const GetEnv& getenv);

// A value that cannot be used, and why, naming it as its front end spells it.
struct CaptureProblem {
  CaptureOptionId id;
  std::string message;
};

// The capture configuration read from the environment.
struct CaptureEnv {
  std::string output;  // FLOPLINE_OUTPUT, as given ("" = default name in the working dir)
  std::uint32_t kinds = kDefaultKinds;             // FLOPLINE_KINDS
  std::uint64_t max_memory_bytes = 1024ull << 20;  // FLOPLINE_MAX_MEMORY_MB
  std::string manifest;           // FLOPLINE_MANIFEST: file where each process notes what it wrote
  bool quiet = false;             // FLOPLINE_QUIET=1: no messages on stderr
  std::string run_id;             // FLOPLINE_RUN_ID: shared by every trace of one run
  std::int64_t run_pid = 0;       // FLOPLINE_RUN_PID: the `flopline run` process
  CountersSetting counters;       // FLOPLINE_COUNTERS
  std::string counters_exclude;   // FLOPLINE_COUNTERS_EXCLUDE: kernel names never measured
  std::string profiler_steps;     // FLOPLINE_PROFILER_STEPS: step ranges given ProfilerStep#N
  GpuMetricsSetting gpu_metrics;  // FLOPLINE_GPU_METRICS
  std::int64_t flush_interval_ns = kDefaultFlushIntervalNs;  // FLOPLINE_FLUSH_INTERVAL; 0 = off
  bool self_timing = false;  // FLOPLINE_SELF_TIMING=1: flopline's own time, by part, at exit
  // FLOPLINE_CAPTURE_RANGE, FLOPLINE_NVTX_CAPTURE, FLOPLINE_CAPTURE_RANGE_END,
  // FLOPLINE_DELAY, FLOPLINE_DURATION (capture_window.h); not gated() = the whole run.
  CaptureWindowSetting windows;
  std::optional<std::string> rank;
  // FLOPLINE_CONTROL_DIR: the run's control directory, where `flopline start` and `stop`
  // leave their commands (run_control.h); "" = none.
  std::string control_dir;
  // One line per variable that could not be used (its default was taken instead).
  std::vector<std::string> warnings;
};
// Parses every option of `values` and checks the rules between them, the same for every
// front end: a value that cannot be used leaves its option at its default and adds a
// problem (the command line and Session refuse the first; the library warns and goes on).
// `warnings` and `rank` are left empty.
CaptureEnv parse_capture_options(const CaptureOptionValues& values, CaptureFrontEnd front,
                                 std::vector<CaptureProblem>* problems);
// The environment's values parsed; each problem a warning that says the fallback.
CaptureEnv read_capture_env(const GetEnv& getenv);

}  // namespace flopline::capture
