// Capture windows: which parts of a run are recorded (docs/CAPTURE.md, "Capture
// ranges"). Nsight Systems' options and meanings: --capture-range=cudaProfilerApi|nvtx,
// --nvtx-capture=NAME[@DOMAIN], --capture-range-end=stop|repeat[:N], --delay,
// --duration. Plain C++ (no CUDA): the options are parsed here, and CaptureWindow is the
// decision itself, a state machine fed with what the program did (profiler start and
// stop, NVTX ranges opened and closed, the passing of time) that says when a window
// opens and closes and why. src/cupti/capture_window_control.cc feeds it from CUPTI's
// callbacks and turns recording on and off; the tests feed it synthetic sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopline/trace/types.h"

namespace flopline::capture {

using trace::TimeNs;

enum class CaptureRangeKind : std::uint8_t {
  kNone,             // no trigger: the window is the time the delay and duration allow
  kCudaProfilerApi,  // between cudaProfilerStart/cuProfilerStart and ...Stop
  kNvtx,             // while an NVTX range that matches --nvtx-capture is open
  // Between `flopline start` and `flopline stop` from another shell (`flopline launch`;
  // run_control.h carries the commands). Recording is off until the first start.
  kOnDemand,
};

// "none", "cudaProfilerApi", "nvtx", "ondemand" (any case). Nothing, with `error` set,
// otherwise.
std::optional<CaptureRangeKind> parse_capture_range(std::string_view text, std::string* error);
const char* to_string(CaptureRangeKind kind);

// --nvtx-capture=NAME[@DOMAIN]. NAME is matched against a range's whole message (a
// FLOP suffix included): exactly, or as a glob where `*` is any run of characters and
// `?` one character. `\` makes the next `@`, `*`, `?` or `\` literal. The last `@` that
// is not escaped starts the domain: none means NVTX's default domain (where
// nvtxRangePushA, torch.cuda.nvtx and the nvtx package's default ranges go), `@*` any
// domain, `@NAME` the domain created with that name (matched exactly).
class NvtxCapturePattern {
 public:
  enum class Domain : std::uint8_t { kDefault, kAny, kNamed };

  NvtxCapturePattern() = default;
  static std::optional<NvtxCapturePattern> parse(std::string_view text, std::string* error);

  // `domain_name`: "" for the default domain, the domain's name, or nothing when the
  // range is in a domain whose name is not known (which only `@*` matches).
  bool matches(std::string_view message, std::optional<std::string_view> domain_name) const;
  bool matches_message(std::string_view message) const;

  const std::string& text() const { return text_; }  // as given
  Domain domain() const { return domain_; }
  const std::string& domain_name() const { return domain_name_; }
  bool is_glob() const { return glob_; }

 private:
  // The name with escapes resolved; in a glob, wildcards are marked in `wild_`.
  std::string name_;
  std::vector<bool> wild_;
  bool glob_ = false;
  Domain domain_ = Domain::kDefault;
  std::string domain_name_;
  std::string text_;
};

// --capture-range-end: "stop" -> 1 window, "repeat" -> every window (0), "repeat:N"
// -> N windows (N >= 1). Nothing, with `error` set, otherwise (repeat:0 included).
std::optional<std::uint32_t> parse_capture_range_end(std::string_view text, std::string* error);

// --delay and --duration: seconds as nsys takes them ("10", "2.5"), or with a unit
// ("500ms", "10s", "2m", "1h"), up to 10^7 s. `allow_zero`: whether 0 is taken (a delay
// of 0 is none; a duration must be longer than 0). Nothing, with `error` set, otherwise.
std::optional<std::int64_t> parse_capture_seconds(std::string_view text, bool allow_zero,
                                                  std::string* error);
inline constexpr std::int64_t kMaxCaptureSecondsNs = 10'000'000LL * 1'000'000'000LL;

struct CaptureWindowSetting {
  CaptureRangeKind range = CaptureRangeKind::kNone;
  NvtxCapturePattern nvtx;        // with kNvtx
  std::uint32_t max_windows = 1;  // --capture-range-end: 1 stop, N repeat:N, 0 repeat
  std::int64_t delay_ns = 0;      // --delay: nothing recorded before origin + delay
  std::int64_t duration_ns = 0;   // --duration: each window at most this long; 0 = no limit

  // False when every option is at its default: the whole run is recorded, as without them.
  bool gated() const { return range != CaptureRangeKind::kNone || delay_ns > 0 || duration_ns > 0; }
  // Whether `flopline start` and `flopline stop` switch this run's recording: runs without
  // a trigger (recording from the start, switched off by a stop) and on-demand runs
  // (off until a start). cudaProfilerApi and nvtx runs follow the program's own calls.
  bool takes_commands() const {
    return range == CaptureRangeKind::kNone || range == CaptureRangeKind::kOnDemand;
  }
  // Whether windows open from CUPTI's callbacks (profiler calls, NVTX ranges).
  bool needs_callbacks() const {
    return range == CaptureRangeKind::kCudaProfilerApi || range == CaptureRangeKind::kNvtx;
  }
};

// One line for the trace's metadata and messages: "nvtx 'step 1*' (default domain),
// repeat:3, delay 2s, duration 500ms".
std::string describe(const CaptureWindowSetting& setting);

// The five options as given ("" = not given), and the names to use in errors: the
// command line's, the environment's or Session's (capture_config.h,
// capture_window_names()).
struct CaptureWindowText {
  std::string range, nvtx_capture, range_end, delay, duration;
};
struct CaptureWindowOptionNames {
  const char* range;
  const char* nvtx_capture;
  const char* range_end;
  const char* delay;
  const char* duration;
};

// All five together, with the rules between them: --nvtx-capture only with
// --capture-range=nvtx, which needs it; --capture-range-end only with a capture range.
// ondemand records every window unless --capture-range-end says otherwise (each
// `flopline start` is asked for); the other ranges record the first (nsys's default).
// Nothing, with `error` naming the option, when any is wrong.
std::optional<CaptureWindowSetting> parse_capture_window_setting(
    const CaptureWindowText& text, const CaptureWindowOptionNames& names, std::string* error);

// A window as the trace lists it.
struct CaptureWindowRecord {
  std::uint32_t index = 0;        // 1, 2, ... in the order they opened
  TimeNs start = 0;               // ns, on the capture clock
  TimeNs end = 0;                 // ns; meaningless while `open`
  bool open = true;               // not closed yet (a snapshot taken inside it)
  std::string opened_by;          // "cudaProfilerStart", "NVTX range 'step 12'", "delay 2s elapsed"
  std::string closed_by;          // "cudaProfilerStop", "NVTX range 'step 12' ended", "program end"
  std::uint32_t open_thread = 0;  // OS thread of the call that opened it; 0 = none (time)
  std::uint32_t close_thread = 0;  // the same for the close
};

// What a `flopline start` or `flopline stop` did (CaptureWindow::command).
enum class CommandResult : std::uint8_t {
  kApplied,         // the switch turned: a window opened or closed, or will at the delay
  kAlreadyStarted,  // a start while switched on (a window open, or waiting for the delay,
                    // or closed by --duration: stop, then start, opens the next)
  kAlreadyStopped,  // a stop while switched off
  kLimitReached,    // a start after --capture-range-end's windows were all recorded
  kNotCommanded,    // cudaProfilerApi or nvtx: the program's own calls open windows
  kFinished,        // the program has ended
};
const char* to_string(CommandResult result);

// A decision: a window opened or closed.
struct WindowChange {
  bool opened = false;      // true: recording turns on; false: off
  TimeNs at = 0;            // the time of the event that caused it
  std::uint32_t index = 0;  // the window's
  std::string reason;
  std::uint32_t thread_id = 0;
};

// The state machine. Not thread-safe: the caller serializes events (one mutex), and
// gives times that do not go backwards. After construction call tick() once at the
// capture's start: without a trigger that opens the first window.
//
// The window is open while all of these hold: the delay has passed; the trigger is on
// (kNone: always, unless a `flopline stop` switched it off; kCudaProfilerApi: a start
// seen and no stop since; kNvtx: at least one matching range open, on any thread,
// push/pop or start/end; kOnDemand: a `flopline start` and no stop since); the window has not run
// for --duration (after which the trigger must go off and on again); and fewer than
// max_windows windows opened before it. Each time it opens is one window.
class CaptureWindow {
 public:
  CaptureWindow(CaptureWindowSetting setting, TimeNs origin);

  using Changes = std::vector<WindowChange>;

  // cudaProfilerStart / cuProfilerStart. A start while started is ignored (CUDA's are
  // not counted); so is a stop while stopped.
  // `call` names it in the window's reason (cuProfilerStart when the driver's was called).
  Changes profiler_start(TimeNs t, std::uint32_t thread,
                         std::string_view call = "cudaProfilerStart");
  Changes profiler_stop(TimeNs t, std::uint32_t thread, std::string_view call = "cudaProfilerStop");
  // Push/pop ranges nest per thread and per domain (`domain`: NVTX's handle, 0 for the
  // default domain; `domain_name` as NvtxCapturePattern::matches takes it). A pop with
  // nothing pushed (a push made before recording started) is ignored.
  Changes nvtx_push(TimeNs t, std::uint32_t thread, std::uint64_t domain,
                    std::optional<std::string_view> domain_name, std::string_view message);
  Changes nvtx_pop(TimeNs t, std::uint32_t thread, std::uint64_t domain);
  // Start/end ranges are matched by the id nvtxRangeStart returned (0: unknown, ignored)
  // and may end on another thread.
  Changes nvtx_start(TimeNs t, std::uint32_t thread, std::uint64_t id,
                     std::optional<std::string_view> domain_name, std::string_view message);
  Changes nvtx_end(TimeNs t, std::uint32_t thread, std::uint64_t id);
  // `flopline start` (start true) or `flopline stop` from another shell: switches the
  // trigger of an ondemand run, or of a run without one (which starts switched on).
  // `why` is the window's reason ("flopline start"). Not taken by cudaProfilerApi and
  // nvtx runs. Unlike the program's events, a start may open a window after done(): a
  // run without a trigger records any number of windows this way.
  struct CommandOutcome {
    CommandResult result = CommandResult::kApplied;
    Changes changes;
  };
  CommandOutcome command(TimeNs t, bool start, std::string_view why);
  // Whether the commands' switch is on (a window open or due once the delay passes).
  bool switched_on() const { return switched_on_; }
  // Time passing: the delay ending, a window's duration running out.
  Changes tick(TimeNs t);
  // The program ends: an open window closes ("program end") and none opens after.
  Changes finish(TimeNs t);

  bool is_open() const { return open_; }
  // No window can open any more from the program's calls or the passing of time: the
  // caller may stop listening to them (a command may still open one, see command()).
  bool done() const;
  // When tick() must next be called for the delay or the duration; nothing when no time
  // will change anything.
  std::optional<TimeNs> next_deadline() const;
  // Whether NVTX ranges still matter (kNvtx and not done()).
  bool wants_nvtx() const { return setting_.range == CaptureRangeKind::kNvtx && !done(); }
  const std::vector<CaptureWindowRecord>& windows() const { return windows_; }
  // Events that made no sense and changed nothing: a stop while stopped, a second
  // start, a pop with nothing pushed, an end of an unknown start/end range id 0.
  std::uint64_t ignored_events() const { return ignored_; }
  const CaptureWindowSetting& setting() const { return setting_; }

 private:
  struct Stack {
    std::uint64_t depth = 0;
    // The depths at which matching ranges were pushed, with their messages.
    std::vector<std::pair<std::uint64_t, std::string>> matching;
  };
  struct StackKey {
    std::uint32_t thread;
    std::uint64_t domain;
    bool operator==(const StackKey& o) const { return thread == o.thread && domain == o.domain; }
  };
  struct StackKeyHash {
    std::size_t operator()(const StackKey& k) const {
      return std::hash<std::uint64_t>()(k.domain * 0x9E3779B97F4A7C15ull ^ k.thread);
    }
  };

  bool trigger_on() const;
  // --capture-range-end's windows were all recorded (never for a run without a trigger,
  // whose windows only commands make).
  bool limit_reached() const;
  // Time first: the delay passing, the duration running out.
  void advance(TimeNs t, Changes& out);
  // Opens or closes the window to match the state; `why`/`thread` name the event.
  void settle(TimeNs t, const std::string& open_why, const std::string& close_why,
              std::uint32_t thread, Changes& out);
  void open_window(TimeNs t, const std::string& why, std::uint32_t thread, Changes& out);
  void close_window(TimeNs t, const std::string& why, std::uint32_t thread, Changes& out);
  std::string delay_reason() const;

  CaptureWindowSetting setting_;
  TimeNs origin_ = 0;
  bool delay_passed_ = false;
  bool started_ = false;  // kCudaProfilerApi
  // kNone and kOnDemand: the commands' switch (kNone starts on, kOnDemand off).
  bool switched_on_ = false;
  std::uint64_t matching_open_ = 0;
  std::unordered_map<StackKey, Stack, StackKeyHash> stacks_;
  std::unordered_map<std::uint64_t, std::string> open_ids_;  // matching start/end ranges
  std::string last_trigger_;  // what turned the trigger on last, for the delay's reason
  bool open_ = false;
  TimeNs opened_at_ = 0;
  bool rearm_ = false;  // a window closed by its duration: the trigger must go off first
  bool finished_ = false;
  std::uint32_t opened_count_ = 0;
  std::vector<CaptureWindowRecord> windows_;
  std::uint64_t ignored_ = 0;
};

}  // namespace flopline::capture
