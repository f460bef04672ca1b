#include "run_command.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/launch_work.h"
#include "flopline/capture/output_manifest.h"
#include "flopline/capture/run_control.h"
#include "flopline/capture/window_files.h"
#include "flopline/trace/atomic_file.h"
#include "run_process.h"
#include "run_summary.h"

extern char** environ;

namespace flopline::cli {
namespace {

bool starts_with(const std::string& s, std::string_view p) {
  return s.rfind(p, 0) == 0;
}

void set_var(std::vector<std::string>& env, std::string_view name, std::string_view value) {
  const std::string prefix = concat(name, "=");
  for (std::string& e : env) {
    if (starts_with(e, prefix)) {
      e = concat(prefix, value);
      return;
    }
  }
  env.push_back(concat(prefix, value));
}

const std::string* find_var(const std::vector<std::string>& env, std::string_view name) {
  const std::string prefix = concat(name, "=");
  for (const std::string& e : env) {
    if (starts_with(e, prefix)) return &e;
  }
  return nullptr;
}

// A fresh manifest file that processes of the run note their traces in: in TMPDIR, else
// /tmp (saying why TMPDIR was not used), else nothing (the run then cannot list files).
std::string make_manifest(std::ostream& err) {
  auto try_dir = [](const std::string& dir, std::string* why) -> std::string {
    std::string templ = dir + "/flopline-run-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    const int fd = mkstemp(buf.data());
    if (fd < 0) {
      *why = std::strerror(errno);
      return {};
    }
    close(fd);
    return std::string(buf.data());
  };
  std::string why;
  if (const char* t = std::getenv("TMPDIR"); t != nullptr && *t != '\0') {
    if (std::string m = try_dir(t, &why); !m.empty()) return m;
    err << "flopline run: TMPDIR=" << t << " is not usable (" << why << "); using /tmp\n";
  }
  if (std::string m = try_dir("/tmp", &why); !m.empty()) return m;
  err << "flopline run: cannot create a file in /tmp (" << why
      << "); the traces are written but not listed or summarised here\n";
  return {};
}

// Why traces cannot be written where `-o` points, before the command runs: its directory
// (or the directory it names) must exist and be writable, and a file name must fit the
// file system at its longest (with `window_files`, flopline launch's -windowN too).
// Empty when they can.
std::string output_problem(const std::string& absolute_output, bool window_files) {
  const std::string window = window_files ? "-window4294967295" : "";
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool names_directory = absolute_output.empty() || absolute_output.back() == '/' ||
                               fs::is_directory(absolute_output, ec);
  if (names_directory) {
    // A file of the default name inside it.
    std::string dir = absolute_output.empty() ? std::string("/") : absolute_output;
    if (dir.back() != '/') dir += '/';
    return trace::output_path_problem(dir + "flopline-rank4294967295" + window + ".json");
  }
  // %p and %r at their longest (a pid or rank of 10 digits), and the -rankR or -PID
  // that other processes of the run add beside it.
  const std::string name = fs::path(absolute_output).filename().string();
  std::string widest;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 1 < name.size() && (name[i + 1] == 'p' || name[i + 1] == 'r')) {
      widest += "4294967295";
      ++i;
    } else if (name[i] == '%' && i + 1 < name.size() && name[i + 1] == '%') {
      widest += '%';
      ++i;
    } else {
      widest += name[i];
    }
  }
  widest += "-rank4294967295" + window;
  std::string dir = fs::path(absolute_output).parent_path().string();
  if (dir.empty()) dir.assign(1, '/');
  std::string problem = trace::output_path_problem((dir == "/" ? "" : dir) + "/" + widest);
  if (problem.find("the file name is too long") != std::string::npos) {
    return concat(name, ": the file name is too long with a pid or rank",
                  window_files ? " and a window number" : "", " added (",
                  std::to_string(widest.size()), " bytes)");
  }
  return problem;
}

// An id every trace of this run carries in its metadata.
std::string make_run_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%llx-%x", static_cast<unsigned long long>(now),
                static_cast<unsigned>(getpid()));
  return buf;
}

// RUNS/ID/ for `flopline start` and `stop` (run_control.h); old leftovers of ended runs
// go first. Nothing, with `problem` set, when it cannot be made.
std::optional<std::string> make_control_dir(const std::string& run_id, std::int64_t run_pid,
                                            const RunOptions& opt, std::string_view name,
                                            std::int64_t unix_ns, std::string* problem) {
  const std::string runs = capture::runs_directory(
      [](const char* n) -> const char* { return std::getenv(n); }, getuid());
  capture::prune_runs(runs, capture::process_alive, 7 * 24 * 3600);
  capture::RunInfo info;
  info.id = run_id;
  info.pid = run_pid;
  info.start_ticks = capture::process_start_ticks(run_pid).value_or(0);
  info.how = std::string(name);
  const std::string& range = opt.capture[capture::CaptureOptionId::kCaptureRange];
  info.capture_range = range.empty() ? "none" : range;
  info.started_unix_ns = unix_ns;
  for (const std::string& a : opt.command) info.command += (info.command.empty() ? "" : " ") + a;
  return capture::create_run_dir(runs, info, problem);
}

// The driver is what CUDA programs load; without it nothing would be recorded.
std::optional<std::string> missing_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib != nullptr) {
    dlclose(lib);
    return std::nullopt;
  }
  const char* why = dlerror();
  return std::string(why != nullptr ? why : "libcuda.so.1 not found");
}

// When `-o` named a plain file and the command's own process wrote nothing there (a
// launcher, a shell), the first trace of the run takes that name (rank 0 first). A
// window's file (flopline launch) keeps its name, which says which window it holds.
void give_plain_path(const std::string& output, std::vector<capture::ManifestEntry>& files,
                     std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (output.empty() || output.back() == '/' || output.find("%p") != std::string::npos ||
      output.find("%r") != std::string::npos || fs::is_directory(output, ec)) {
    return;
  }
  capture::ManifestEntry* pick = nullptr;
  for (capture::ManifestEntry& e : files) {
    if (e.state != capture::ManifestState::kWritten) continue;
    if (capture::is_window_file_path(e.path)) continue;
    if (e.path == output) return;  // taken by the process it belongs to
    if (pick == nullptr || e.path == capture::path_with_suffix(output, "rank0")) pick = &e;
  }
  if (pick == nullptr || fs::exists(output, ec)) return;
  fs::rename(pick->path, output, ec);
  if (ec) {
    err << "flopline run: could not rename " << pick->path << " to " << output << ": "
        << ec.message() << "\n";
    return;
  }
  pick->path = output;
}

// The capture option `name` (its long or short form) spells, or nullptr.
const capture::CaptureOption* capture_option_named(std::string_view name) {
  for (const capture::CaptureOption& o : capture::capture_options()) {
    if (!o.cli.empty() && (name == o.cli || name == o.cli_short)) return &o;
  }
  return nullptr;
}

std::string self_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

}  // namespace

std::string run_usage() {
  return "usage: flopline run [options] [--] CMD [ARGS...]\n"
         "\n"
         "Runs CMD and records what it does on the GPU (kernels, copies, CUDA calls, NVTX\n"
         "ranges) without changing it: Python, PyTorch and Triton programs included. Each\n"
         "process that uses CUDA writes one trace (Chrome/Kineto JSON). At the end, the top\n"
         "operators (NVTX ranges) and kernels by GPU time are shown with TFLOP/s and GB/s.\n"
         "\n"
         "options:\n"
         "  -o, --output PATH      trace file or directory; %p = pid, %r = rank (default:\n"
         "                         flopline-%p.json, flopline-rank%r.json under a launcher)\n"
         "  --kinds LIST           what to record, comma-separated: kernel, memcpy, memset,\n"
         "                         calls, runtime, driver, sync, nvtx, name, overhead,\n"
         "                         queries, api, default, all; -NAME removes one (default:\n"
         "                         kernel, memcpy, memset, calls, nvtx, name, overhead;\n"
         "                         calls = launches, copies, allocations and syncs through\n"
         "                         CUPTI callbacks; all = every call as activity records)\n"
         "  --max-memory-mb N      memory for records per process before they are dropped\n"
         "                         and counted (default 1024)\n"
         "  --counters[=N|all]     count each kernel's FLOPs and DRAM bytes with the GPU's\n"
         "                         hardware counters: the first N launches of the same work\n"
         "                         (function, grid, block and arguments) are measured\n"
         "                         (replayed; default 1), later ones take the measured\n"
         "                         values; communication kernels (NCCL, NVSHMEM) are never\n"
         "                         replayed (docs/COUNTERS.md)\n"
         "  --counters-exclude REGEX  kernels whose names match REGEX (ECMAScript, searched)\n"
         "                         are never replayed either: a custom all-reduce, say\n"
         "  --gpu-metrics[=INTERVAL] sample SM, tensor-pipe and DRAM activity of each GPU\n"
         "                         every INTERVAL (10us..10ms, default 100us) as counter\n"
         "                         tracks; not with --counters\n"
         "  --flush-interval T     append finished events to the trace every T while CMD\n"
         "                         runs (100ms..1h, default 5s; off = only at the end), so\n"
         "                         a process killed with SIGKILL keeps what was flushed\n"
         "  --capture-range=KIND   record only inside windows (nsys's names; default none:\n"
         "                         the whole run): cudaProfilerApi = between\n"
         "                         cudaProfilerStart and cudaProfilerStop\n"
         "                         (torch.cuda.profiler.start/stop); nvtx = while an NVTX\n"
         "                         range named by --nvtx-capture is open; ondemand =\n"
         "                         between 'flopline start' and 'flopline stop' (as\n"
         "                         flopline launch). Outside windows nothing is recorded\n"
         "                         (CUPTI's recording is off)\n"
         "  --nvtx-capture=NAME[@DOMAIN]  the ranges that open windows: the whole message,\n"
         "                         exactly or as a glob (* any text, ? one character;\n"
         "                         \\@ \\* \\? \\\\ are literal); no @DOMAIN = NVTX's default\n"
         "                         domain (torch.cuda.nvtx), @* = any domain\n"
         "  --capture-range-end=stop|repeat[:N]  stop after the first window (default), or\n"
         "                         record every window, or the first N\n"
         "  --delay T              record nothing before T after the run starts (seconds,\n"
         "                         or 500ms, 2m, 1h); a window opened earlier starts at T\n"
         "  --duration T           close each window T after it opened (without\n"
         "                         --capture-range: record from the start, or --delay, for T)\n"
         "  --profiler-steps PATTERN  give each NVTX range whose name matches PATTERN (a\n"
         "                         glob, as 'step *') and ends in a number N a\n"
         "                         ProfilerStep#N slice over it, torch.profiler's step\n"
         "                         marker, so that tools such as Holistic Trace Analysis\n"
         "                         split the trace into iterations\n"
         "  --top N                rows in each summary table (default 10)\n"
         "  --no-summary           do not print the summary\n"
         "  -h, --help             show this help\n"
         "\n"
         "Each process that did GPU work writes one trace; one that did none (a launcher, a\n"
         "compile worker) writes nothing. A plain -o FILE belongs to CMD's own process; other\n"
         "processes write FILE-rankR or FILE-PID beside it, and the first of them takes FILE\n"
         "when CMD's own process did no GPU work. Every file written is named at the end.\n"
         "Without a CUDA driver CMD still runs, unrecorded.\n"
         "\n"
         "Without --capture-range, 'flopline stop' from another shell switches recording\n"
         "off and 'flopline start' on again (see flopline start --help).\n"
         "\n"
         "Exit status: CMD's own; 128+N when signal N ended it; 127 when CMD is not found;\n"
         "1 when flopline cannot run it (no injection library, -o in a missing or read-only\n"
         "directory); 2 for a bad command line.\n";
}

Parsed<RunOptions> parse_run_args(std::span<const std::string> args) {
  using P = Parsed<RunOptions>;
  RunOptions o;
  std::size_t i = 0;
  auto value = [&](const std::string& opt, std::string& out) -> std::optional<std::string> {
    const std::size_t eq = opt.find('=');
    if (eq != std::string::npos && starts_with(opt, "--")) {
      out = opt.substr(eq + 1);
      return std::nullopt;
    }
    if (i + 1 >= args.size()) return concat(opt, " needs a value");
    out = args[++i];
    return std::nullopt;
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-' || a == "-") break;  // the command starts here
    const std::string name = a.substr(0, a.find('='));
    std::string v;
    if (name == "-h" || name == "--help") {
      o.help = true;
      return P{std::move(o), {}};
    } else if (name == "--no-summary") {
      if (name != a) return P::fail("--no-summary takes no value");
      o.summary = false;
    } else if (const capture::CaptureOption* c = capture_option_named(name)) {
      // A capture option (capture_config.h's table): its value as given, checked below
      // with the others, as the injection library will read it.
      if (!c->bare.empty() && name == a) {
        v = c->bare;  // "--counters" alone
      } else if (auto e = value(a, v)) {
        return P::fail(*e);
      }
      if (v.empty()) return P::fail(concat(name, " needs a value"));
      o.capture[c->id] = v;
    } else if (name == "--top") {
      if (auto e = value(a, v)) return P::fail(*e);
      auto n = parse_positive_count(v, "--top");
      if (!n.ok()) return P::fail(n.error);
      o.top = *n.value;
    } else {
      return P::fail(concat("unknown option '", a, "'"));
    }
  }
  o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (o.command.empty()) return P::fail("no command given (flopline run [options] -- CMD ARGS...)");
  std::vector<capture::CaptureProblem> problems;
  capture::parse_capture_options(o.capture, capture::CaptureFrontEnd::kCommandLine, &problems);
  if (!problems.empty()) return P::fail(problems.front().message);
  return P{std::move(o), {}};
}

std::string launch_usage() {
  return "usage: flopline launch [options] [--] CMD [ARGS...]\n"
         "\n"
         "Runs CMD as flopline run does, with recording off until 'flopline start' from\n"
         "another shell switches it on; 'flopline stop' switches it off again. Each start\n"
         "opens a window (every process of the run at once: the ranks of a torchrun job);\n"
         "each process writes a file per window (OUT-window1.json, OUT-window2.json,\n"
         "...), finished a flush interval or two after the window closed, while CMD runs\n"
         "on (with --flush-interval off: one file per process, holding every window, at\n"
         "the end). Outside windows CUPTI records nothing. The run's id and pid are\n"
         "printed at the start; 'flopline start' takes either, or none when only one run\n"
         "is live.\n"
         "\n"
         "options: those of flopline run (flopline run --help), except --capture-range and\n"
         "--nvtx-capture, and:\n"
         "  --capture-range-end=stop|repeat[:N]  record every window (default), only the\n"
         "                         first, or the first N; later starts are refused\n"
         "  --delay T              starts before T after the run began wait for T\n"
         "  --duration T           close each window T after it opened ('flopline stop',\n"
         "                         then 'flopline start', opens the next)\n"
         "\n"
         "Exit status: as flopline run's; 1 also when the run's control directory cannot\n"
         "be made (FLOPLINE_RUNS_DIR, else $TMPDIR/flopline-runs-UID).\n";
}

Parsed<RunOptions> parse_launch_args(std::span<const std::string> args) {
  // First, so that a --capture-range given replaces it (and is refused below) and the
  // options that need a capture range (--capture-range-end) are checked against it.
  std::vector<std::string> with_range = {"--capture-range=ondemand"};
  with_range.insert(with_range.end(), args.begin(), args.end());
  Parsed<RunOptions> p = parse_run_args(with_range);
  if (!p.ok() || p.value->help) return p;
  RunOptions& o = *p.value;
  std::string error;
  const std::string& range = o.capture[capture::CaptureOptionId::kCaptureRange];
  if (capture::parse_capture_range(range, &error) != capture::CaptureRangeKind::kOnDemand) {
    return Parsed<RunOptions>::fail(
        concat("--capture-range=", range,
               ": flopline launch records between flopline start and flopline stop; "
               "flopline run takes the other capture ranges"));
  }
  return p;
}

std::string absolute_output(const std::string& output, const std::string& cwd) {
  if (!output.empty() && output[0] == '/') return output;
  std::string dir = cwd;
  if (dir.empty() || dir.back() != '/') dir += '/';
  return output.empty() ? dir : dir + output;
}

RunEnvironment capture_environment(const RunOptions& opt) {
  RunEnvironment run;
  run.values = opt.capture;
  return run;
}

std::vector<std::string> build_run_environment(const std::vector<std::string>& base,
                                               const RunEnvironment& run) {
  std::vector<std::string> env = base;
  set_var(env, "CUDA_INJECTION64_PATH", run.inject_library);
  // NVTX hands its calls to the injection library, which passes them to CUPTI.
  set_var(env, "NVTX_INJECTION64_PATH", run.inject_library);
  std::string preload;
  if (const std::string* old = find_var(env, "LD_PRELOAD")) {
    preload = old->substr(std::strlen("LD_PRELOAD="));
  }
  if (preload.find(run.inject_library) == std::string::npos) {
    preload = preload.empty() ? run.inject_library : concat(preload, ":", run.inject_library);
  }
  set_var(env, "LD_PRELOAD", preload);
  for (const capture::CaptureOption& o : capture::capture_options()) {
    if (const std::string& v = run.values[o.id]; !v.empty()) set_var(env, o.env, v);
  }
  return env;
}

int run_run_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto parsed = parse_run_args(args);
  if (!parsed.ok()) {
    err << usage_error("run", parsed.error);
    return kExitUsage;
  }
  const RunOptions& opt = *parsed.value;
  if (opt.help) {
    out << run_usage();
    return kExitOk;
  }
  return run_recorded(opt, "run", out, err);
}

int run_launch_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto parsed = parse_launch_args(args);
  if (!parsed.ok()) {
    err << usage_error("launch", parsed.error);
    return kExitUsage;
  }
  if (parsed.value->help) {
    out << launch_usage();
    return kExitOk;
  }
  return run_recorded(*parsed.value, "launch", out, err);
}

int run_recorded(const RunOptions& opt, std::string_view name, std::ostream& out,
                 std::ostream& err) {
  const std::string who = concat("flopline ", name);
  const char* path_var = std::getenv("PATH");
  const auto program = resolve_command(opt.command[0], path_var ? path_var : "");
  if (!program) {
    err << who << ": command not found: " << opt.command[0] << "\n";
    return kExitCommandNotFound;
  }
  std::error_code cwd_error;
  const std::string cwd = std::filesystem::current_path(cwd_error).string();
  const std::string& given_output = opt.capture[capture::CaptureOptionId::kOutput];
  const std::string output = cwd_error ? given_output : absolute_output(given_output, cwd);
  const std::string& range_text = opt.capture[capture::CaptureOptionId::kCaptureRange];
  std::string range_problem;
  const bool window_files =
      !range_text.empty() && capture::parse_capture_range(range_text, &range_problem) ==
                                 capture::CaptureRangeKind::kOnDemand;
  if (const std::string problem = output_problem(output, window_files); !problem.empty()) {
    err << who << ": cannot write traces to " << (given_output.empty() ? cwd : given_output) << " ("
        << problem << "); nothing was run\n";
    return kExitFailure;
  }
  // A bad FLOPLINE_INJECT_LIBRARY is a wrong setting wherever the command runs.
  if (const char* o = std::getenv("FLOPLINE_INJECT_LIBRARY"); o != nullptr && *o != '\0') {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o, ec)) {
      err << who << ": FLOPLINE_INJECT_LIBRARY=" << o
          << ": not a file (it names the injection library, libflopline_inject.so)\n";
      return kExitFailure;
    }
  }
  if (auto why = missing_driver()) {
    // Like nsys: the command still runs, so one script serves machines with and without GPUs.
    err << who << ": no CUDA driver on this machine (" << *why << "); running " << opt.command[0]
        << " without recording: no trace will be written\n";
    out.flush();
    std::vector<std::string> base;
    for (char** e = environ; *e != nullptr; ++e) base.emplace_back(*e);
    const ChildResult child = run_child(*program, opt.command, base);
    if (!child.started)
      err << who << ": cannot run " << opt.command[0] << ": " << child.error << "\n";
    return child.exit_code;
  }
  const auto inject =
      find_injection_library(self_executable(), std::getenv("FLOPLINE_INJECT_LIBRARY"));
  if (!inject) {
    err << who
        << ": libflopline_inject.so not found beside the flopline executable or in "
           "../lib (set FLOPLINE_INJECT_LIBRARY to its path); was flopline built with CUDA?\n";
    return kExitFailure;
  }
  using capture::CaptureOptionId;
  const std::string manifest = make_manifest(err);
  const std::string run_id = make_run_id();
  const std::int64_t run_pid = getpid();
  // The capture clock (CUPTI's timestamps) is the system's real-time clock.
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const std::int64_t time_base_ns =
      static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  // The run's control directory, where `flopline start` and `stop` find it.
  std::string control_problem;
  const std::optional<std::string> control =
      make_control_dir(run_id, run_pid, opt, name, time_base_ns, &control_problem);
  std::string range_error;
  const std::string& range = opt.capture[CaptureOptionId::kCaptureRange];
  const bool on_demand = !range.empty() && capture::parse_capture_range(range, &range_error) ==
                                               capture::CaptureRangeKind::kOnDemand;
  if (!control && on_demand) {
    err << who << ": cannot make the run's control directory (" << control_problem
        << "), so flopline start could never reach it; nothing was run\n";
    if (!manifest.empty()) unlink(manifest.c_str());
    return kExitFailure;
  } else if (!control) {
    err << who << ": flopline start and stop cannot reach this run (" << control_problem << ")\n";
  }
  if (on_demand) {
    err << who << ": run " << run_id << " (pid " << run_pid
        << ") records nothing until 'flopline start' (or 'flopline start " << run_pid
        << "') from another shell\n";
  }
  RunEnvironment run = capture_environment(opt);
  run.inject_library = *inject;
  run.values[CaptureOptionId::kOutput] = output;
  run.values[CaptureOptionId::kManifest] = manifest;
  run.values[CaptureOptionId::kRunId] = run_id;
  run.values[CaptureOptionId::kRunPid] = std::to_string(run_pid);
  run.values[CaptureOptionId::kTimeBase] = std::to_string(time_base_ns);
  if (control) run.values[CaptureOptionId::kControlDir] = *control;
  std::vector<std::string> base;
  for (char** e = environ; *e != nullptr; ++e) base.emplace_back(*e);
  const std::vector<std::string> env = build_run_environment(base, run);

  out.flush();
  const ChildResult child = run_child(*program, opt.command, env);
  if (control) capture::mark_run_ended(*control);
  if (!child.started) {
    err << who << ": cannot run " << opt.command[0] << ": " << child.error << "\n";
    if (!manifest.empty()) unlink(manifest.c_str());
    return child.exit_code;
  }
  if (child.signal != 0) {
    err << who << ": " << opt.command[0] << " was ended by signal " << child.signal << " ("
        << signal_name(child.signal) << ")\n";
  }
  std::vector<capture::ManifestEntry> notes = capture::read_manifest(manifest);
  if (!manifest.empty()) unlink(manifest.c_str());
  std::vector<capture::ManifestEntry> left = capture::run_files(notes);
  give_plain_path(output, left, err);
  std::vector<std::string> files;
  for (const capture::ManifestEntry& e : left) {
    if (e.state == capture::ManifestState::kFailed) {
      err << who << ": process " << e.pid << " could not write " << e.path << ": " << e.detail
          << "\n";
    } else if (e.state == capture::ManifestState::kPartial) {
      err << who << ": " << e.path << " (process " << e.pid << ") holds what was flushed "
          << e.detail << "; the process ended before its final write\n";
      files.push_back(e.path);
    } else {
      files.push_back(e.path);
    }
  }
  if (opt.summary && !files.empty()) print_run_summary(files, opt.top, out, err);
  if (files.empty()) {
    const bool windows = !range.empty() || !opt.capture[CaptureOptionId::kDelay].empty() ||
                         !opt.capture[CaptureOptionId::kDuration].empty();
    err << who << ": no trace was written (no process of the command did GPU work"
        << (windows ? " inside a capture window" : "")
        << ", or it ended before flopline could write)\n";
  }
  for (const std::string& f : files) out << "flopline: trace: " << f << "\n";
  out.flush();
  return child.exit_code;
}

}  // namespace flopline::cli
