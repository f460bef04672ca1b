// Capture windows (flopline/capture/capture_window.h): the options, the NVTX name
// patterns, and the state machine fed with synthetic sequences of profiler calls, NVTX
// ranges and time, hostile ones included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/capture_window.h"

namespace flopline::capture {
namespace {

constexpr TimeNs kSec = 1'000'000'000;

NvtxCapturePattern pattern(const std::string& text) {
  std::string error;
  auto p = NvtxCapturePattern::parse(text, &error);
  EXPECT_TRUE(p) << text << ": " << error;
  return p.value_or(NvtxCapturePattern{});
}

CaptureWindowSetting profiler_api(std::uint32_t windows = 1) {
  CaptureWindowSetting s;
  s.range = CaptureRangeKind::kCudaProfilerApi;
  s.max_windows = windows;
  return s;
}

CaptureWindowSetting nvtx(const std::string& text, std::uint32_t windows = 1) {
  CaptureWindowSetting s;
  s.range = CaptureRangeKind::kNvtx;
  s.nvtx = pattern(text);
  s.max_windows = windows;
  return s;
}

// Starts the machine as the capture does (one tick at the start).
CaptureWindow started(const CaptureWindowSetting& s, TimeNs origin = 0) {
  CaptureWindow w(s, origin);
  w.tick(origin);
  return w;
}

// --- options ------------------------------------------------------------------------

TEST(CaptureWindowOptions, RangeKinds) {
  std::string error;
  EXPECT_EQ(parse_capture_range("cudaProfilerApi", &error), CaptureRangeKind::kCudaProfilerApi);
  EXPECT_EQ(parse_capture_range("CUDAPROFILERAPI", &error), CaptureRangeKind::kCudaProfilerApi);
  EXPECT_EQ(parse_capture_range("nvtx", &error), CaptureRangeKind::kNvtx);
  EXPECT_EQ(parse_capture_range("none", &error), CaptureRangeKind::kNone);
  EXPECT_FALSE(parse_capture_range("hotkey", &error));
  EXPECT_NE(error.find("'hotkey'"), std::string::npos) << error;
  EXPECT_FALSE(parse_capture_range("", &error));
}

TEST(CaptureWindowOptions, RangeEnd) {
  std::string error;
  EXPECT_EQ(parse_capture_range_end("stop", &error), 1u);
  EXPECT_EQ(parse_capture_range_end("repeat", &error), 0u);
  EXPECT_EQ(parse_capture_range_end("repeat:3", &error), 3u);
  EXPECT_EQ(parse_capture_range_end("REPEAT:1", &error), 1u);
  EXPECT_FALSE(parse_capture_range_end("repeat:0", &error));
  EXPECT_NE(error.find("repeat:0"), std::string::npos) << error;
  for (const char* bad : {"repeat:", "repeat:-1", "repeat:3x", "repeat:99999999999",
                          "stop-shutdown", "repeat-shutdown:2", "none", "", "repeat 3"}) {
    error.clear();
    EXPECT_FALSE(parse_capture_range_end(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(CaptureWindowOptions, Seconds) {
  std::string error;
  EXPECT_EQ(parse_capture_seconds("10", true, &error), 10 * kSec);
  EXPECT_EQ(parse_capture_seconds("2.5", true, &error), 2500'000'000);
  EXPECT_EQ(parse_capture_seconds("500ms", true, &error), 500'000'000);
  EXPECT_EQ(parse_capture_seconds("250us", true, &error), 250'000);
  EXPECT_EQ(parse_capture_seconds("2m", true, &error), 120 * kSec);
  EXPECT_EQ(parse_capture_seconds("1h", true, &error), 3600 * kSec);
  EXPECT_EQ(parse_capture_seconds("0", true, &error), 0);
  EXPECT_FALSE(parse_capture_seconds("0", false, &error));  // a duration must be > 0
  EXPECT_FALSE(parse_capture_seconds("0ms", false, &error));
  for (const char* bad :
       {"", "-1", "1x", "s", "1.2.3", "inf", "nan", "1e3", "20000000", " 1", "1 s"}) {
    error.clear();
    EXPECT_FALSE(parse_capture_seconds(bad, true, &error)) << bad;
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos) << error;
  }
}

TEST(CaptureWindowOptions, AllTogetherWithTheirRules) {
  std::string error;
  const CaptureWindowOptionNames cli = capture_window_names(CaptureFrontEnd::kCommandLine);
  auto s = parse_capture_window_setting({"nvtx", "step 1*", "repeat:3", "2", "500ms"}, cli, &error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->range, CaptureRangeKind::kNvtx);
  EXPECT_EQ(s->max_windows, 3u);
  EXPECT_EQ(s->delay_ns, 2 * kSec);
  EXPECT_EQ(s->duration_ns, 500'000'000);
  EXPECT_TRUE(s->gated());
  EXPECT_EQ(describe(*s), "nvtx 'step 1*' (default domain), repeat:3, delay 2s, duration 500ms");

  s = parse_capture_window_setting({}, cli, &error);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->gated());
  EXPECT_EQ(describe(*s), "none");

  s = parse_capture_window_setting({"", "", "", "", "30"}, cli, &error);  // duration alone
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->gated());
  EXPECT_EQ(describe(*s), "duration 30s");

  // Each error names the option it is about.
  struct Bad {
    CaptureWindowText text;
    const char* option;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"nvtx", "", "", "", ""}, "--capture-range: nvtx needs --nvtx-capture"},
           {{"", "step", "", "", ""}, "--nvtx-capture: needs --capture-range=nvtx"},
           {{"cudaProfilerApi", "step", "", "", ""}, "--nvtx-capture: needs"},
           {{"", "", "repeat", "", ""}, "--capture-range-end: needs --capture-range"},
           {{"cudaProfilerApi", "", "repeat:0", "", ""}, "--capture-range-end: 'repeat:0'"},
           {{"bogus", "", "", "", ""}, "--capture-range: 'bogus'"},
           {{"nvtx", "step\\", "", "", ""}, "--nvtx-capture: 'step\\'"},
           {{"", "", "", "-3", ""}, "--delay: '-3'"},
           {{"", "", "", "", "0"}, "--duration: '0'"},
       }) {
    error.clear();
    EXPECT_FALSE(parse_capture_window_setting(b.text, cli, &error)) << b.option;
    EXPECT_EQ(error.rfind(b.option, 0), 0u) << error;
  }
  // The environment's names in the environment's errors.
  EXPECT_FALSE(parse_capture_window_setting(
      {"nvtx", "", "", "", ""}, capture_window_names(CaptureFrontEnd::kEnvironment), &error));
  EXPECT_EQ(error.rfind("FLOPLINE_CAPTURE_RANGE: nvtx needs FLOPLINE_NVTX_CAPTURE", 0), 0u)
      << error;
}

// --- NVTX name patterns ---------------------------------------------------------------

TEST(NvtxCapturePatterns, ExactAndGlob) {
  const NvtxCapturePattern exact = pattern("step 12");
  EXPECT_FALSE(exact.is_glob());
  EXPECT_TRUE(exact.matches("step 12", ""));
  EXPECT_FALSE(exact.matches("step 123", ""));
  EXPECT_FALSE(exact.matches("step 1", ""));
  EXPECT_FALSE(exact.matches("step 12 [flops=100]", ""));  // the whole message

  const NvtxCapturePattern glob = pattern("step 1*");
  EXPECT_TRUE(glob.is_glob());
  for (const char* yes : {"step 1", "step 10", "step 19", "step 100", "step 1 [flops=1]"}) {
    EXPECT_TRUE(glob.matches(yes, "")) << yes;
  }
  for (const char* no : {"step 2", "step 21", "Step 1", "xstep 1", "step ", ""}) {
    EXPECT_FALSE(glob.matches(no, "")) << no;
  }
  const NvtxCapturePattern q = pattern("layer ?/fwd");
  EXPECT_TRUE(q.matches("layer 3/fwd", ""));
  EXPECT_FALSE(q.matches("layer 12/fwd", ""));
  EXPECT_FALSE(q.matches("layer /fwd", ""));

  const NvtxCapturePattern any = pattern("*");
  EXPECT_TRUE(any.matches("", ""));
  EXPECT_TRUE(any.matches("anything at all", ""));
  // Backtracking across several stars.
  const NvtxCapturePattern multi = pattern("*a*b*c");
  EXPECT_TRUE(multi.matches("xxaxxbxxc", ""));
  EXPECT_TRUE(multi.matches("abcabc", ""));
  EXPECT_FALSE(multi.matches("acb", ""));
  EXPECT_FALSE(multi.matches("abcab", ""));
}

TEST(NvtxCapturePatterns, Domains) {
  const NvtxCapturePattern plain = pattern("step 1");
  EXPECT_EQ(plain.domain(), NvtxCapturePattern::Domain::kDefault);
  EXPECT_TRUE(plain.matches("step 1", ""));
  EXPECT_FALSE(plain.matches("step 1", "NCCL"));
  EXPECT_FALSE(plain.matches("step 1", std::nullopt));  // a domain of unknown name

  const NvtxCapturePattern named = pattern("step 1@trainer");
  EXPECT_EQ(named.domain(), NvtxCapturePattern::Domain::kNamed);
  EXPECT_EQ(named.domain_name(), "trainer");
  EXPECT_TRUE(named.matches("step 1", "trainer"));
  EXPECT_FALSE(named.matches("step 1", ""));
  EXPECT_FALSE(named.matches("step 1", "Trainer"));
  EXPECT_FALSE(named.matches("step 1", std::nullopt));

  const NvtxCapturePattern any = pattern("step 1@*");
  EXPECT_EQ(any.domain(), NvtxCapturePattern::Domain::kAny);
  EXPECT_TRUE(any.matches("step 1", ""));
  EXPECT_TRUE(any.matches("step 1", "trainer"));
  EXPECT_TRUE(any.matches("step 1", std::nullopt));
}

TEST(NvtxCapturePatterns, AtSignsAndEscapes) {
  // The last '@' separates the domain; an escaped one is part of the name.
  const NvtxCapturePattern two = pattern("loss@scale@amp");
  EXPECT_EQ(two.domain_name(), "amp");
  EXPECT_TRUE(two.matches("loss@scale", "amp"));
  EXPECT_FALSE(two.matches("loss", "scale@amp"));

  const NvtxCapturePattern escaped = pattern("loss\\@scale");
  EXPECT_EQ(escaped.domain(), NvtxCapturePattern::Domain::kDefault);
  EXPECT_TRUE(escaped.matches("loss@scale", ""));

  const NvtxCapturePattern both = pattern("a\\@b@dom\\@x");
  EXPECT_EQ(both.domain_name(), "dom@x");
  EXPECT_TRUE(both.matches("a@b", "dom@x"));

  const NvtxCapturePattern literal_star = pattern("x\\*y\\?\\\\");
  EXPECT_FALSE(literal_star.is_glob());
  EXPECT_TRUE(literal_star.matches("x*y?\\", ""));
  EXPECT_FALSE(literal_star.matches("xAy?\\", ""));

  const NvtxCapturePattern glob_star = pattern("a\\**");  // a literal '*' then anything
  EXPECT_TRUE(glob_star.matches("a*", ""));
  EXPECT_TRUE(glob_star.matches("a*bc", ""));
  EXPECT_FALSE(glob_star.matches("ab", ""));
}

TEST(NvtxCapturePatterns, BadPatternsSayWhy) {
  std::string error;
  for (const char* bad :
       {"", "@", "@dom", "step@", "step\\", "st\\ep", "step@do*main", "step@d?"}) {
    error.clear();
    EXPECT_FALSE(NvtxCapturePattern::parse(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  NvtxCapturePattern::parse("step@", &error);
  EXPECT_NE(error.find("nothing after its '@'"), std::string::npos) << error;
  NvtxCapturePattern::parse("st\\ep", &error);
  EXPECT_NE(error.find("no escape"), std::string::npos) << error;
}

// --- the state machine: cudaProfilerApi ----------------------------------------------

TEST(CaptureWindowMachine, ProfilerStartStopOpensOneWindow) {
  CaptureWindow w = started(profiler_api());
  EXPECT_FALSE(w.is_open());
  auto c = w.profiler_start(100, 7);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].opened);
  EXPECT_EQ(c[0].at, 100);
  EXPECT_EQ(c[0].index, 1u);
  EXPECT_EQ(c[0].reason, "cudaProfilerStart");
  EXPECT_EQ(c[0].thread_id, 7u);
  EXPECT_TRUE(w.is_open());
  c = w.profiler_stop(200, 8);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FALSE(c[0].opened);
  EXPECT_EQ(c[0].reason, "cudaProfilerStop");
  EXPECT_TRUE(w.done());  // stop: the first window only
  // A later start opens nothing.
  EXPECT_TRUE(w.profiler_start(300, 7).empty());
  EXPECT_FALSE(w.is_open());
  ASSERT_EQ(w.windows().size(), 1u);
  const CaptureWindowRecord& r = w.windows()[0];
  EXPECT_EQ(r.start, 100);
  EXPECT_EQ(r.end, 200);
  EXPECT_FALSE(r.open);
  EXPECT_EQ(r.opened_by, "cudaProfilerStart");
  EXPECT_EQ(r.closed_by, "cudaProfilerStop");
  EXPECT_EQ(r.open_thread, 7u);
  EXPECT_EQ(r.close_thread, 8u);
}

TEST(CaptureWindowMachine, StopWithoutStartAndNestedStartsAreIgnored) {
  CaptureWindow w = started(profiler_api(0));
  EXPECT_TRUE(w.profiler_stop(10, 1).empty());
  EXPECT_EQ(w.ignored_events(), 1u);
  EXPECT_EQ(w.profiler_start(20, 1).size(), 1u);
  EXPECT_TRUE(w.profiler_start(30, 1).empty());  // not counted: the first stop ends it
  EXPECT_EQ(w.ignored_events(), 2u);
  EXPECT_EQ(w.profiler_stop(40, 1).size(), 1u);
  EXPECT_FALSE(w.is_open());
  EXPECT_TRUE(w.profiler_stop(50, 1).empty());
  EXPECT_EQ(w.ignored_events(), 3u);
  EXPECT_FALSE(w.done());  // repeat: more may come
  EXPECT_EQ(w.profiler_start(60, 1).size(), 1u);
  EXPECT_EQ(w.windows().size(), 2u);
}

TEST(CaptureWindowMachine, RepeatCountsWindows) {
  CaptureWindow w = started(profiler_api(3));
  for (int i = 0; i < 5; ++i) {
    w.profiler_start(100 * i, 1);
    w.profiler_stop(100 * i + 50, 1);
  }
  ASSERT_EQ(w.windows().size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w.windows()[i].index, i + 1);
    EXPECT_EQ(w.windows()[i].start, 100 * static_cast<TimeNs>(i));
  }
  EXPECT_TRUE(w.done());

  CaptureWindow every = started(profiler_api(0));
  for (int i = 0; i < 50; ++i) {
    every.profiler_start(100 * i, 1);
    every.profiler_stop(100 * i + 50, 1);
  }
  EXPECT_EQ(every.windows().size(), 50u);
  EXPECT_FALSE(every.done());
}

TEST(CaptureWindowMachine, TheDriversCallsNameTheirWindows) {
  CaptureWindow w = started(profiler_api());
  w.profiler_start(10, 1, "cuProfilerStart");
  w.profiler_stop(20, 1, "cuProfilerStop");
  EXPECT_EQ(w.windows()[0].opened_by, "cuProfilerStart");
  EXPECT_EQ(w.windows()[0].closed_by, "cuProfilerStop");
}

TEST(CaptureWindowMachine, StartStopOnDifferentThreads) {
  CaptureWindow w = started(profiler_api());
  w.profiler_start(10, 1);
  EXPECT_EQ(w.profiler_stop(20, 2).size(), 1u);  // process-wide, as CUDA's
}

TEST(CaptureWindowMachine, WindowOpenAtExitClosesThere) {
  CaptureWindow w = started(profiler_api());
  w.profiler_start(10, 1);
  auto c = w.finish(99);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "program end");
  EXPECT_EQ(w.windows()[0].end, 99);
  EXPECT_TRUE(w.done());
  EXPECT_TRUE(w.profiler_start(120, 1).empty());
  EXPECT_TRUE(w.finish(130).empty());  // twice is harmless
}

TEST(CaptureWindowMachine, OtherModesIgnoreProfilerCalls) {
  CaptureWindow w = started(nvtx("step"));
  EXPECT_TRUE(w.profiler_start(1, 1).empty());
  EXPECT_FALSE(w.is_open());
  CaptureWindow p = started(profiler_api());
  EXPECT_TRUE(p.nvtx_push(1, 1, 0, "", "step").empty());
  EXPECT_FALSE(p.is_open());
}

// --- nvtx ---------------------------------------------------------------------------------

TEST(CaptureWindowMachine, NvtxRangeOpensAndItsPopCloses) {
  CaptureWindow w = started(nvtx("step 12"));
  EXPECT_TRUE(w.nvtx_push(1, 5, 0, "", "train").empty());
  EXPECT_TRUE(w.nvtx_push(2, 5, 0, "", "step 11").empty());
  EXPECT_TRUE(w.nvtx_pop(3, 5, 0).empty());
  auto c = w.nvtx_push(4, 5, 0, "", "step 12");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "NVTX range 'step 12'");
  EXPECT_TRUE(w.nvtx_push(5, 5, 0, "", "forward").empty());  // inside
  EXPECT_TRUE(w.nvtx_pop(6, 5, 0).empty());                  // pops "forward"
  EXPECT_TRUE(w.is_open());
  c = w.nvtx_pop(7, 5, 0);  // pops "step 12"
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "NVTX range 'step 12' ended");
  EXPECT_EQ(w.windows()[0].start, 4);
  EXPECT_EQ(w.windows()[0].end, 7);
  EXPECT_TRUE(w.done());
  EXPECT_FALSE(w.wants_nvtx());
}

TEST(CaptureWindowMachine, GlobWithRepeatGivesEachMatchingRange) {
  // The GPU test's sequence: steps 0..79 and 'step 1*' with repeat:3 give step 1,
  // step 10 and step 11.
  CaptureWindow w = started(nvtx("step 1*", 3));
  for (int step = 0; step < 80; ++step) {
    w.nvtx_push(step * 10, 1, 0, "", "step " + std::to_string(step));
    w.nvtx_pop(step * 10 + 5, 1, 0);
  }
  ASSERT_EQ(w.windows().size(), 3u);
  EXPECT_EQ(w.windows()[0].opened_by, "NVTX range 'step 1'");
  EXPECT_EQ(w.windows()[1].opened_by, "NVTX range 'step 10'");
  EXPECT_EQ(w.windows()[2].opened_by, "NVTX range 'step 11'");
  EXPECT_EQ(w.windows()[2].closed_by, "NVTX range 'step 11' ended");
  EXPECT_EQ(w.windows()[1].start, 100);
  EXPECT_EQ(w.windows()[1].end, 105);
}

TEST(CaptureWindowMachine, NestedMatchingRangesMakeOneWindow) {
  CaptureWindow w = started(nvtx("step*", 0));
  EXPECT_EQ(w.nvtx_push(1, 1, 0, "", "step 1").size(), 1u);
  EXPECT_TRUE(w.nvtx_push(2, 1, 0, "", "step 1 inner").empty());
  EXPECT_TRUE(w.nvtx_pop(3, 1, 0).empty());  // the inner one: still inside the outer
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.nvtx_pop(4, 1, 0).size(), 1u);
  EXPECT_EQ(w.windows().size(), 1u);
  EXPECT_EQ(w.windows()[0].closed_by, "NVTX range 'step 1' ended");
}

TEST(CaptureWindowMachine, MatchingRangesAcrossThreadsKeepTheWindowOpen) {
  CaptureWindow w = started(nvtx("step*", 0));
  w.nvtx_push(1, 1, 0, "", "step a");
  w.nvtx_push(2, 2, 0, "", "step b");  // another thread, overlapping
  EXPECT_TRUE(w.nvtx_pop(3, 1, 0).empty());
  EXPECT_TRUE(w.is_open());
  // A pop on a third thread that pushed nothing changes nothing.
  EXPECT_TRUE(w.nvtx_pop(4, 3, 0).empty());
  EXPECT_EQ(w.ignored_events(), 1u);
  auto c = w.nvtx_pop(5, 2, 0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "NVTX range 'step b' ended");
  EXPECT_EQ(c[0].thread_id, 2u);
  EXPECT_EQ(w.windows().size(), 1u);
}

TEST(CaptureWindowMachine, StacksArePerThreadAndDomain) {
  CaptureWindow w = started(nvtx("step@*", 0));
  // Domain 9's push of "step" and a pop of the default domain on the same thread: the
  // pop ends the default domain's "other", not "step".
  w.nvtx_push(1, 1, 0, "", "other");
  EXPECT_EQ(w.nvtx_push(2, 1, 9, "trainer", "step").size(), 1u);
  EXPECT_TRUE(w.nvtx_pop(3, 1, 0).empty());
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.nvtx_pop(4, 1, 9).size(), 1u);
  EXPECT_FALSE(w.is_open());
}

TEST(CaptureWindowMachine, DomainsChooseWhichRangesCount) {
  CaptureWindow def = started(nvtx("step"));
  EXPECT_TRUE(def.nvtx_push(1, 1, 9, "trainer", "step").empty());
  EXPECT_TRUE(def.nvtx_push(2, 1, 8, std::nullopt, "step").empty());
  EXPECT_EQ(def.nvtx_push(3, 1, 0, "", "step").size(), 1u);

  CaptureWindow named = started(nvtx("step@trainer"));
  EXPECT_TRUE(named.nvtx_push(1, 1, 0, "", "step").empty());
  EXPECT_EQ(named.nvtx_push(2, 1, 9, "trainer", "step").size(), 1u);
}

TEST(CaptureWindowMachine, PopsOfRangesPushedBeforeRecordingAreIgnored) {
  CaptureWindow w = started(nvtx("step"));
  EXPECT_TRUE(w.nvtx_pop(1, 1, 0).empty());  // pushed before the capture started
  EXPECT_EQ(w.ignored_events(), 1u);
  EXPECT_EQ(w.nvtx_push(2, 1, 0, "", "step").size(), 1u);
  EXPECT_EQ(w.nvtx_pop(3, 1, 0).size(), 1u);
}

TEST(CaptureWindowMachine, RangeNeverClosedEndsAtExit) {
  CaptureWindow w = started(nvtx("step"));
  w.nvtx_push(1, 1, 0, "", "step");
  EXPECT_EQ(w.next_deadline(), std::nullopt);
  auto c = w.finish(50);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "program end");
  EXPECT_EQ(w.windows()[0].end, 50);
  EXPECT_TRUE(w.nvtx_pop(60, 1, 0).empty());
}

TEST(CaptureWindowMachine, StartEndRangesByIdAcrossThreads) {
  CaptureWindow w = started(nvtx("epoch*", 0));
  EXPECT_TRUE(w.nvtx_start(1, 1, 77, "", "data").empty());
  EXPECT_EQ(w.nvtx_start(2, 1, 78, "", "epoch 1").size(), 1u);
  EXPECT_TRUE(w.nvtx_end(3, 2, 77).empty());  // the other range, ended elsewhere
  EXPECT_TRUE(w.nvtx_end(4, 2, 12345).empty());
  EXPECT_TRUE(w.is_open());
  // Overlapping, not nested: the window lasts until the last of them ends.
  EXPECT_TRUE(w.nvtx_start(5, 3, 79, "", "epoch 2").empty());
  EXPECT_TRUE(w.nvtx_end(6, 2, 78).empty());
  EXPECT_TRUE(w.is_open());
  auto c = w.nvtx_end(7, 4, 79);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "NVTX range 'epoch 2' ended");
  EXPECT_EQ(c[0].thread_id, 4u);
  // A matching range whose id is unknown (0) never opens a window it could not close.
  EXPECT_TRUE(w.nvtx_start(8, 1, 0, "", "epoch 3").empty());
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.ignored_events(), 1u);
  // Mixed push/pop and start/end ranges count together.
  w.nvtx_push(9, 1, 0, "", "epoch 4");
  w.nvtx_start(10, 1, 80, "", "epoch 5");
  EXPECT_TRUE(w.nvtx_pop(11, 1, 0).empty());
  EXPECT_EQ(w.nvtx_end(12, 1, 80).size(), 1u);
  EXPECT_EQ(w.windows().size(), 2u);
}

// --- delay and duration ---------------------------------------------------------------

TEST(CaptureWindowMachine, DelayAloneOpensOnceTimeComes) {
  CaptureWindowSetting s;
  s.delay_ns = 2 * kSec;
  CaptureWindow w = started(s, 1000);
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.next_deadline(), 1000 + 2 * kSec);
  EXPECT_TRUE(w.tick(1000 + kSec).empty());
  auto c = w.tick(1000 + 2 * kSec);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "delay 2s elapsed");
  EXPECT_EQ(w.next_deadline(), std::nullopt);
  c = w.finish(1000 + 9 * kSec);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(w.windows().size(), 1u);
}

TEST(CaptureWindowMachine, DurationWithNoDelayStartsAtOnce) {
  CaptureWindowSetting s;
  s.duration_ns = 3 * kSec;
  CaptureWindow w(s, 0);
  auto c = w.tick(10);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "capture start");
  EXPECT_EQ(w.next_deadline(), 10 + 3 * kSec);
  EXPECT_TRUE(w.tick(10 + kSec).empty());
  c = w.tick(10 + 3 * kSec);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "duration 3s elapsed");
  EXPECT_TRUE(w.done());
  EXPECT_EQ(w.next_deadline(), std::nullopt);
  EXPECT_TRUE(w.tick(100 * kSec).empty());
}

TEST(CaptureWindowMachine, DelayThenDurationWithoutATrigger) {
  CaptureWindowSetting s;
  s.delay_ns = kSec;
  s.duration_ns = 500'000'000;
  CaptureWindow w = started(s, 0);
  w.tick(kSec);
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.next_deadline(), kSec + 500'000'000);
  w.tick(2 * kSec);  // a late tick closes it at its own time
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.windows()[0].end, 2 * kSec);
  EXPECT_TRUE(w.done());
}

TEST(CaptureWindowMachine, TriggersBeforeTheDelayWaitForIt) {
  CaptureWindowSetting s = profiler_api();
  s.delay_ns = 10 * kSec;
  CaptureWindow w = started(s, 0);
  EXPECT_TRUE(w.profiler_start(kSec, 1).empty());  // started, but too early
  auto c = w.tick(10 * kSec);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "delay 10s elapsed, inside cudaProfilerStart");
  EXPECT_EQ(w.profiler_stop(11 * kSec, 1).size(), 1u);

  // A start and stop both before the delay: nothing at all.
  CaptureWindow early = started(s, 0);
  early.profiler_start(kSec, 1);
  early.profiler_stop(2 * kSec, 1);
  EXPECT_TRUE(early.tick(10 * kSec).empty());
  EXPECT_TRUE(early.windows().empty());
}

TEST(CaptureWindowMachine, AnEventAfterTheDelayPassesItWithoutATick) {
  CaptureWindowSetting s = nvtx("step");
  s.delay_ns = 5;
  CaptureWindow w = started(s, 0);
  EXPECT_TRUE(w.nvtx_push(1, 1, 0, "", "step").empty());
  // The pop comes after the delay and before any tick: the window that the delay opens
  // closes with it (the caller's timer would have opened it at 5).
  auto c = w.nvtx_pop(8, 1, 0);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(c[0].opened);
  EXPECT_FALSE(c[1].opened);
  EXPECT_EQ(w.windows().size(), 1u);
}

TEST(CaptureWindowMachine, DurationCapsEachTriggeredWindow) {
  CaptureWindowSetting s = profiler_api(0);
  s.duration_ns = 100;
  CaptureWindow w = started(s, 0);
  w.profiler_start(1000, 1);
  EXPECT_EQ(w.next_deadline(), 1100);
  auto c = w.tick(1100);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "duration 100ns elapsed");
  // Still started: no new window until the trigger goes off and on again.
  EXPECT_TRUE(w.tick(1200).empty());
  EXPECT_FALSE(w.done());
  EXPECT_TRUE(w.profiler_stop(1300, 1).empty());
  EXPECT_EQ(w.profiler_start(1400, 1).size(), 1u);
  EXPECT_EQ(w.windows().size(), 2u);
  // The duration noticed by an event rather than a tick.
  c = w.profiler_stop(1600, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "duration 100ns elapsed");
}

TEST(CaptureWindowMachine, DurationWindowsCountTowardsRepeat) {
  CaptureWindowSetting s = nvtx("step", 2);
  s.duration_ns = 10;
  CaptureWindow w = started(s, 0);
  for (int i = 0; i < 4; ++i) {
    w.nvtx_push(100 * i, 1, 0, "", "step");
    w.tick(100 * i + 20);
    w.nvtx_pop(100 * i + 50, 1, 0);
  }
  ASSERT_EQ(w.windows().size(), 2u);
  EXPECT_EQ(w.windows()[1].end, 120);
  EXPECT_TRUE(w.done());
}

TEST(CaptureWindowMachine, TimeGoingBackwardsBreaksNothing) {
  CaptureWindow w = started(profiler_api(0));
  w.profiler_start(100, 1);
  w.profiler_stop(50, 1);
  ASSERT_EQ(w.windows().size(), 1u);
  EXPECT_GE(w.windows()[0].end, w.windows()[0].start);
}

}  // namespace
}  // namespace flopline::capture
