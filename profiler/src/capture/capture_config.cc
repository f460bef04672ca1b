#include "flopline/capture/capture_config.h"

#include "flopline/capture/launch_work.h"
#include "flopline/capture/output_manifest.h"
#include "flopline/capture/self_timing.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <initializer_list>

namespace flopline::capture {
namespace {

struct KindName {
  std::string_view name;
  std::uint32_t bits;
};

// Canonical names first (activity_kinds_to_string writes them in this order), then the
// aliases people bring from CUPTI, nsys and Kineto.
constexpr std::array<KindName, 23> kKindNames = {{
    {"kernel", kKindKernel},
    {"memcpy", kKindMemcpy},
    {"memset", kKindMemset},
    {"runtime", kKindRuntime},
    {"driver", kKindDriver},
    {"sync", kKindSync},
    {"nvtx", kKindNvtx},
    {"name", kKindName},
    {"overhead", kKindOverhead},
    {"queries", kKindQueries},
    {"calls", kKindCalls},
    {"all", kAllKinds},
    {"api", kKindRuntime | kKindDriver},
    {"concurrent_kernel", kKindKernel},
    {"kernels", kKindKernel},
    {"memcpy2", kKindMemcpy},
    {"synchronization", kKindSync},
    {"marker", kKindNvtx},
    {"marker_data", kKindNvtx},
    {"markers", kKindNvtx},
    {"cuda", kKindRuntime},
    {"default", kDefaultKinds},
    {"query", kKindQueries},
}};
constexpr std::size_t kCanonicalKinds = 11;

// Calls that only read state. Chosen from what PyTorch, Triton and cuBLAS make around
// every operator (read off traces of them); anything that launches, copies, allocates,
// synchronizes or changes state is not here.
constexpr std::string_view kQueryApis[] = {
    // runtime
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaDeviceGetAttribute",
    "cudaGetDeviceProperties",
    "cudaStreamIsCapturing",
    "cudaStreamGetCaptureInfo",
    "cudaPointerGetAttributes",
    "cudaDriverGetVersion",
    "cudaRuntimeGetVersion",
    "cudaFuncGetAttributes",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyMaxActiveClusters",
    "cudaOccupancyMaxPotentialClusterSize",
    "cudaGetFuncBySymbol",
    "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion",
    "cudaStreamGetPriority",
    "cudaStreamGetFlags",
    "cudaStreamGetId",
    "cudaDeviceGetStreamPriorityRange",
    "cudaThreadExchangeStreamCaptureMode",
    // driver
    "cuGetProcAddress",
    "cuGetExportTable",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetUuid",
    "cuDeviceTotalMem",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxGetState",
    "cuDriverGetVersion",
    "cuCtxGetCurrent",
    "cuCtxGetDevice",
    "cuCtxGetFlags",
    "cuCtxGetId",
    "cuCtxGetApiVersion",
    "cuCtxGetStreamPriorityRange",
    "cuPointerGetAttribute",
    "cuPointerGetAttributes",
    "cuKernelGetName",
    "cuKernelGetFunction",
    "cuKernelGetAttribute",
    "cuFuncGetAttribute",
    "cuFuncGetName",
    "cuStreamIsCapturing",
    "cuStreamGetCaptureInfo",
    "cuStreamGetCtx",
    "cuStreamGetId",
    "cuStreamGetFlags",
    "cuStreamGetPriority",
    "cuModuleGetLoadingMode",
    "cuLibraryGetKernel",
    "cuLibraryGetModule",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cuOccupancyMaxActiveClusters",
    "cuOccupancyMaxPotentialClusterSize",
};

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Substrings of the base names kKindCalls records (runtime cuda*, driver cu*).
constexpr std::string_view kRecordedCallParts[] = {
    "Launch",      "Memcpy",      "Memset",          "Malloc",      "MemAlloc",    "Free",
    "Synchronize", "EventRecord", "StreamWaitEvent", "DeviceReset", "MemPrefetch",
};

std::optional<std::uint32_t> kind_bits(std::string_view name) {
  const std::string l = lower(name);
  for (const KindName& k : kKindNames) {
    if (k.name == l) return k.bits;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint32_t> parse_activity_kinds(std::string_view list, std::string* error) {
  std::uint32_t kinds = 0;
  bool first = true;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view item =
        trim(list.substr(pos, comma == std::string_view::npos ? list.npos : comma - pos));
    pos = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
    if (item.empty()) {
      if (error) *error = "empty item in the kinds list";
      return std::nullopt;
    }
    const bool remove = item.front() == '-';
    const std::string_view name = remove ? trim(item.substr(1)) : item;
    const auto bits = kind_bits(name);
    if (!bits) {
      if (error) {
        *error = "unknown activity kind '" + std::string(name) +
                 "' (known: kernel, memcpy, memset, runtime, driver, sync, nvtx, name, "
                 "overhead, queries, calls, api, default, all)";
      }
      return std::nullopt;
    }
    // "-overhead" alone means "the default set without overhead".
    if (first && remove) kinds = kDefaultKinds;
    first = false;
    kinds = remove ? (kinds & ~*bits) : (kinds | *bits);
  }
  return kinds;
}

std::string activity_kinds_to_string(std::uint32_t kinds) {
  if (kinds == kAllKinds) return "all";
  if (kinds == kDefaultKinds) return "default";
  std::string s;
  for (std::size_t i = 0; i < kCanonicalKinds; ++i) {
    if ((kinds & kKindNames[i].bits) == 0) continue;
    if (!s.empty()) s += ',';
    s += kKindNames[i].name;
  }
  return s.empty() ? "none" : s;
}

std::string_view api_base_name(std::string_view name) {
  // Suffixes: "_v3020" (the CUDA version a call appeared in), then "_v2" and the like.
  for (;;) {
    const std::size_t v = name.rfind("_v");
    if (v == std::string_view::npos || v + 2 >= name.size() || v == 0) return name;
    if (name.find_first_not_of("0123456789", v + 2) != std::string_view::npos) return name;
    name = name.substr(0, v);
  }
}

bool is_query_api(std::string_view name) {
  const std::string_view base = api_base_name(name);
  for (std::string_view q : kQueryApis) {
    if (q == base) return true;
  }
  return false;
}

bool is_recorded_call(std::string_view name) {
  const std::string_view base = api_base_name(name);
  if (is_query_api(base)) return false;
  for (std::string_view part : kRecordedCallParts) {
    if (base.find(part) != std::string_view::npos) return true;
  }
  return false;
}

bool counters_forced_flush(const GetEnv& getenv, bool several_contexts) {
  const char* v = getenv("FLOPLINE_COUNTERS_FORCED_FLUSH");
  if (v == nullptr) return !several_contexts;
  return std::string_view(v) != "0";
}

std::optional<std::string> process_rank(const GetEnv& getenv) {
  // RANK (torchrun), Open MPI, MPICH/Intel MPI (PMI), Slurm.
  for (const char* var : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* v = getenv(var);
    if (v != nullptr && *v != '\0') return std::string(v);
  }
  return std::nullopt;
}

namespace {

// A whole decimal number from `min` to `max`, digits only.
std::optional<std::uint64_t> whole_number(const char* v, std::uint64_t min, std::uint64_t max) {
  if (v == nullptr || *v == '\0') return std::nullopt;
  std::uint64_t n = 0;
  for (const char* p = v; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || n > max) return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  if (n < min || n > max) return std::nullopt;
  return n;
}

}  // namespace

std::optional<std::uint32_t> job_world_size(const GetEnv& getenv) {
  for (const char* var : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const char* v = getenv(var);
    if (v == nullptr || *v == '\0') continue;
    const auto n = whole_number(v, 1, 1u << 20);
    if (!n) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
  }
  return std::nullopt;
}

std::optional<std::uint32_t> numeric_rank(const GetEnv& getenv) {
  const std::optional<std::string> rank = process_rank(getenv);
  if (!rank) return std::nullopt;
  const auto n = whole_number(rank->c_str(), 0, (1u << 20) - 1);
  if (!n) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

std::optional<std::int64_t> run_time_base(const GetEnv& getenv) {
  // Up to 2^62 ns (year 2116): far beyond any clock, and no overflow in the parse.
  const auto n = whole_number(getenv(capture_option(CaptureOptionId::kTimeBase).env.data()), 1,
                              std::uint64_t{1} << 62);
  if (!n) return std::nullopt;
  return static_cast<std::int64_t>(*n);
}

std::string expand_output_template(std::string_view templ, std::int64_t pid,
                                   const std::optional<std::string>& rank) {
  std::string out;
  out.reserve(templ.size() + 16);
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] != '%' || i + 1 == templ.size()) {
      out += templ[i];
      continue;
    }
    const char c = templ[i + 1];
    if (c == 'p') {
      out += std::to_string(pid);
    } else if (c == 'r') {
      out += rank ? *rank : std::to_string(pid);
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
    ++i;
  }
  return out;
}

std::string default_output_name(const std::optional<std::string>& rank) {
  return rank ? "flopline-rank%r.json" : "flopline-%p.json";
}

std::string output_path_for_process(std::string_view output, std::int64_t pid,
                                    const std::optional<std::string>& rank,
                                    const std::function<bool(const std::string&)>& is_directory) {
  std::string templ;
  if (output.empty()) {
    templ = default_output_name(rank);
  } else if (output.back() == '/' || (is_directory && is_directory(std::string(output)))) {
    templ = std::string(output);
    if (templ.back() != '/') templ += '/';
    templ += default_output_name(rank);
  } else {
    templ = std::string(output);
  }
  return expand_output_template(templ, pid, rank);
}

std::string run_output_path(std::string_view output, std::int64_t pid,
                            const std::optional<std::string>& rank, bool is_command_process,
                            bool in_run,
                            const std::function<bool(const std::string&)>& is_directory) {
  const bool per_process = output.empty() || output.back() == '/' ||
                           output.find("%p") != std::string_view::npos ||
                           output.find("%r") != std::string_view::npos ||
                           (is_directory && is_directory(std::string(output)));
  const std::string path = output_path_for_process(output, pid, rank, is_directory);
  if (per_process || !in_run || is_command_process) return path;
  return path_with_suffix(path, rank ? "rank" + *rank : std::to_string(pid));
}

namespace {

bool one_of(std::string_view s, std::initializer_list<std::string_view> words) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (std::string_view w : words) {
    if (lower == w) return true;
  }
  return false;
}

}  // namespace

std::optional<CountersSetting> parse_counters(std::string_view text, std::string* error) {
  CountersSetting s;
  if (one_of(text, {"", "off", "0", "false", "no"})) return s;
  s.on = true;
  if (one_of(text, {"on", "true", "yes"})) return s;
  if (one_of(text, {"all", "every"})) {
    s.per_signature = 0;
    return s;
  }
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && end == text.data() + text.size() && n >= 1) {
    s.per_signature = n;
    return s;
  }
  if (error) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + string.
    error->assign(1, '\'');
    error->append(text).append(
        "' is not on, off, all or a number of launches to measure per kernel signature");
  }
  return std::nullopt;
}

std::optional<GpuMetricsSetting> parse_gpu_metrics(std::string_view text, std::string* error) {
  GpuMetricsSetting s;
  if (one_of(text, {"", "off", "0", "false", "no"})) return s;
  s.on = true;
  if (one_of(text, {"on", "1", "true", "yes"})) return s;
  // A decimal number, then its unit.
  std::size_t i = 0;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  const std::string_view number = text.substr(0, i), unit = text.substr(i);
  double scale = 0;
  if (unit == "ns") scale = 1;
  if (unit == "us") scale = 1e3;
  if (unit == "ms") scale = 1e6;
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double ns = value * scale;
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || scale == 0 ||
      ns < kMinGpuMetricsIntervalNs || ns > kMaxGpuMetricsIntervalNs) {
    if (error) {
      error->assign(1, '\'');
      error->append(text).append(
          "' is not on, off or a sampling interval from 10us to 10ms (e.g. 50us)");
    }
    return std::nullopt;
  }
  s.interval_ns = static_cast<std::int64_t>(ns + 0.5);
  return s;
}

std::optional<std::int64_t> parse_flush_interval(std::string_view text, std::string* error) {
  if (one_of(text, {"off", "0", "no", "false"})) return 0;
  std::size_t i = 0;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  const std::string_view number = text.substr(0, i), unit = text.substr(i);
  double scale = 0;
  if (unit == "ms") scale = 1e6;
  if (unit == "s") scale = 1e9;
  if (unit == "m" || unit == "min") scale = 60e9;
  if (unit == "h") scale = 3600e9;
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double ns = value * scale;
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || scale == 0 ||
      ns < 1e8 || ns > 3600e9) {
    if (error) {
      error->assign(1, '\'');
      error->append(text).append(
          "' is not off or an interval from 100ms to 1h with its unit (ms, s, m, h; e.g. 5s)");
    }
    return std::nullopt;
  }
  return static_cast<std::int64_t>(ns + 0.5);
}

std::int64_t next_append_wait_ns(std::int64_t interval_ns, std::int64_t last_append_ns) {
  constexpr std::int64_t kMaxShareInverse = 5;  // appending at most 1/5 of the time
  return std::max(std::max<std::int64_t>(interval_ns, 0),
                  (kMaxShareInverse - 1) * std::max<std::int64_t>(last_append_ns, 0));
}

namespace {

// clang-format off
constexpr CaptureOption kCaptureOptions[] = {
    {.id = CaptureOptionId::kOutput, .env = "FLOPLINE_OUTPUT", .cli = "--output",
     .session = "output_path", .example = "t-%p.json", .cli_short = "-o"},
    {.id = CaptureOptionId::kKinds, .env = "FLOPLINE_KINDS", .cli = "--kinds", .session = "kinds",
     .example = "kernel,nvtx", .fallback = "recording the default kinds"},
    {.id = CaptureOptionId::kMaxMemory, .env = "FLOPLINE_MAX_MEMORY_MB",
     .cli = "--max-memory-mb", .session = "max_memory_mb", .example = "256",
     .fallback = "using 1024"},
    {.id = CaptureOptionId::kCounters, .env = "FLOPLINE_COUNTERS", .cli = "--counters",
     .session = "counters", .example = "3", .bare = "on", .fallback = "counters are off"},
    {.id = CaptureOptionId::kCountersExclude, .env = "FLOPLINE_COUNTERS_EXCLUDE",
     .cli = "--counters-exclude", .session = "counters_exclude", .example = "^my_allreduce",
     .fallback = "only communication kernels are left unmeasured"},
    {.id = CaptureOptionId::kGpuMetrics, .env = "FLOPLINE_GPU_METRICS", .cli = "--gpu-metrics",
     .session = "gpu_metrics", .example = "20us", .bare = "on",
     .fallback = "GPU metrics are off"},
    {.id = CaptureOptionId::kFlushInterval, .env = "FLOPLINE_FLUSH_INTERVAL",
     .cli = "--flush-interval", .session = "", .example = "2s", .fallback = "flushing every 5s"},
    // The five window options are parsed together (parse_capture_window_setting); a
    // problem with any is the first's, and the library then records the whole run.
    {.id = CaptureOptionId::kCaptureRange, .env = "FLOPLINE_CAPTURE_RANGE",
     .cli = "--capture-range", .session = "capture_range", .example = "cudaProfilerApi",
     .fallback = "recording the whole run"},
    {.id = CaptureOptionId::kNvtxCapture, .env = "FLOPLINE_NVTX_CAPTURE", .cli = "--nvtx-capture",
     .session = "nvtx_capture", .example = "step 1*"},
    {.id = CaptureOptionId::kCaptureRangeEnd, .env = "FLOPLINE_CAPTURE_RANGE_END",
     .cli = "--capture-range-end", .session = "capture_range_end", .example = "repeat:3"},
    {.id = CaptureOptionId::kDelay, .env = "FLOPLINE_DELAY", .cli = "--delay", .session = "delay",
     .example = "2.5"},
    {.id = CaptureOptionId::kDuration, .env = "FLOPLINE_DURATION", .cli = "--duration",
     .session = "duration", .example = "500ms"},
    {.id = CaptureOptionId::kProfilerSteps, .env = "FLOPLINE_PROFILER_STEPS",
     .cli = "--profiler-steps", .session = "", .example = "step *",
     .fallback = "no ProfilerStep#N markers are written"},
    {.id = CaptureOptionId::kSelfTiming, .env = "FLOPLINE_SELF_TIMING", .cli = "", .session = "",
     .example = "1", .fallback = "self timing is off"},
    {.id = CaptureOptionId::kQuiet, .env = "FLOPLINE_QUIET", .cli = "", .session = "",
     .example = "1"},
    {.id = CaptureOptionId::kManifest, .env = "FLOPLINE_MANIFEST", .cli = "", .session = "",
     .example = "/tmp/flopline-run-abc", .by_run = true},
    {.id = CaptureOptionId::kRunId, .env = "FLOPLINE_RUN_ID", .cli = "", .session = "",
     .example = "19a2b-4711", .by_run = true},
    {.id = CaptureOptionId::kRunPid, .env = "FLOPLINE_RUN_PID", .cli = "", .session = "",
     .example = "4711", .by_run = true},
    {.id = CaptureOptionId::kTimeBase, .env = "FLOPLINE_TIME_BASE_NS", .cli = "", .session = "",
     .example = "1764000000000000000", .by_run = true},
    {.id = CaptureOptionId::kControlDir, .env = "FLOPLINE_CONTROL_DIR", .cli = "", .session = "",
     .example = "/tmp/flopline-runs-1000/19a2b-4711", .by_run = true},
};
// clang-format on
static_assert(std::size(kCaptureOptions) == kCaptureOptionCount);

}  // namespace

std::span<const CaptureOption> capture_options() {
  return kCaptureOptions;
}

const CaptureOption& capture_option(CaptureOptionId id) {
  // Entries are in the enum's order (the test of the table checks it).
  return kCaptureOptions[static_cast<std::size_t>(id)];
}

std::string_view capture_option_name(CaptureOptionId id, CaptureFrontEnd front) {
  const CaptureOption& o = capture_option(id);
  switch (front) {
    case CaptureFrontEnd::kCommandLine:
      return o.cli;
    case CaptureFrontEnd::kEnvironment:
      return o.env;
    case CaptureFrontEnd::kSession:
      return o.session;
  }
  return o.env;
}

CaptureWindowOptionNames capture_window_names(CaptureFrontEnd front) {
  // The table's names are literals, so each view's data() ends in a NUL.
  auto name = [front](CaptureOptionId id) { return capture_option_name(id, front).data(); };
  return {name(CaptureOptionId::kCaptureRange), name(CaptureOptionId::kNvtxCapture),
          name(CaptureOptionId::kCaptureRangeEnd), name(CaptureOptionId::kDelay),
          name(CaptureOptionId::kDuration)};
}

CaptureOptionValues capture_values_from_env(const GetEnv& getenv) {
  CaptureOptionValues v;
  for (const CaptureOption& o : kCaptureOptions) {
    if (const char* text = getenv(o.env.data())) v[o.id] = text;
  }
  return v;
}

CaptureEnv parse_capture_options(const CaptureOptionValues& values, CaptureFrontEnd front,
                                 std::vector<CaptureProblem>* problems) {
  CaptureEnv env;
  auto problem = [&](CaptureOptionId id, std::string_view why) {
    if (problems == nullptr) return;
    std::string message(capture_option_name(id, front));
    message.append(": ").append(why);
    problems->push_back({id, std::move(message)});
  };
  std::string error;
  env.output = values[CaptureOptionId::kOutput];
  if (const std::string& v = values[CaptureOptionId::kKinds]; !v.empty()) {
    if (auto k = parse_activity_kinds(v, &error)) {
      env.kinds = *k;
    } else {
      problem(CaptureOptionId::kKinds, error);
    }
  }
  if (const std::string& v = values[CaptureOptionId::kMaxMemory]; !v.empty()) {
    std::uint64_t mb = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mb);
    if (ec != std::errc() || end != v.data() + v.size() || mb == 0 || mb > kMaxMemoryMb) {
      problem(CaptureOptionId::kMaxMemory,
              "'" + v + "' is not a whole number from 1 to 2^40 MB, the most the capture takes");
    } else {
      env.max_memory_bytes = mb << 20;
    }
  }
  if (const std::string& v = values[CaptureOptionId::kCounters]; !v.empty()) {
    if (auto c = parse_counters(v, &error)) {
      env.counters = *c;
    } else {
      problem(CaptureOptionId::kCounters, error);
    }
  }
  if (const std::string& v = values[CaptureOptionId::kCountersExclude]; !v.empty()) {
    if (valid_exclude_pattern(v, &error)) {
      env.counters_exclude = v;
    } else {
      problem(CaptureOptionId::kCountersExclude,
              "'" + v + "' is not a regular expression: " + error);
    }
  }
  if (const std::string& v = values[CaptureOptionId::kProfilerSteps]; !v.empty()) {
    if (v.find_first_not_of('*') == std::string::npos) {
      problem(CaptureOptionId::kProfilerSteps,
              "'" + v + "' matches every NVTX range: name the step ranges, as 'step *'");
    } else {
      env.profiler_steps = v;
    }
  }
  if (const std::string& v = values[CaptureOptionId::kGpuMetrics]; !v.empty()) {
    if (auto g = parse_gpu_metrics(v, &error)) {
      env.gpu_metrics = *g;
    } else {
      problem(CaptureOptionId::kGpuMetrics, error);
    }
  }
  if (const std::string& v = values[CaptureOptionId::kFlushInterval]; !v.empty()) {
    if (auto f = parse_flush_interval(v, &error)) {
      env.flush_interval_ns = *f;
    } else {
      problem(CaptureOptionId::kFlushInterval, error);
    }
  }
  {
    const CaptureWindowText text = {
        values[CaptureOptionId::kCaptureRange], values[CaptureOptionId::kNvtxCapture],
        values[CaptureOptionId::kCaptureRangeEnd], values[CaptureOptionId::kDelay],
        values[CaptureOptionId::kDuration]};
    if (auto w = parse_capture_window_setting(text, capture_window_names(front), &error)) {
      env.windows = std::move(*w);
    } else if (problems != nullptr) {
      // The message names the option already; a window that cannot be known is not guessed.
      problems->push_back({CaptureOptionId::kCaptureRange, error});
    }
  }
  if (env.counters.on && env.gpu_metrics.on) {
    // Both read the GPU's performance monitors, which one client holds at a time.
    if (problems != nullptr) {
      std::string message(capture_option_name(CaptureOptionId::kCounters, front));
      message.append(" and ")
          .append(capture_option_name(CaptureOptionId::kGpuMetrics, front))
          .append(" cannot be used together (both read the GPU's performance monitors)");
      problems->push_back({CaptureOptionId::kGpuMetrics, std::move(message)});
    }
    env.gpu_metrics.on = false;
  }
  if (const std::string& v = values[CaptureOptionId::kSelfTiming]; !v.empty()) {
    env.self_timing = parse_self_timing(v.c_str());
    if (!env.self_timing && !one_of(v, {"0", "off", "no", "false"}))
      problem(CaptureOptionId::kSelfTiming, "'" + v + "' is not 1, on, 0 or off");
  }
  env.quiet = values[CaptureOptionId::kQuiet] == "1";
  env.manifest = values[CaptureOptionId::kManifest];
  env.run_id = values[CaptureOptionId::kRunId];
  env.control_dir = values[CaptureOptionId::kControlDir];
  // Set by flopline run itself: a value it did not write is ignored rather than warned of.
  if (const std::string& v = values[CaptureOptionId::kRunPid]; !v.empty()) {
    std::int64_t pid = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), pid);
    if (ec == std::errc() && end == v.data() + v.size() && pid > 0) env.run_pid = pid;
  }
  return env;
}

CaptureEnv read_capture_env(const GetEnv& getenv) {
  std::vector<CaptureProblem> problems;
  CaptureEnv env = parse_capture_options(capture_values_from_env(getenv),
                                         CaptureFrontEnd::kEnvironment, &problems);
  for (const CaptureProblem& p : problems) {
    const std::string_view fallback = capture_option(p.id).fallback;
    env.warnings.push_back(fallback.empty() ? p.message : p.message + "; " + std::string(fallback));
  }
  env.rank = process_rank(getenv);
  return env;
}

}  // namespace flopline::capture
