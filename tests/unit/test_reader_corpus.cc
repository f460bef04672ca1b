// Every real trace of the corpus opens, with the event count SOURCES.md gives
// (len(traceEvents) from python3's json, after chrome://tracing's fix-up for the two
// invalid files), and with the per-phase effects each file is there to exercise.
// Expected numbers that are not in SOURCES.md were computed independently with
// python3 (json + decimal) as described next to each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"

#include "corpus_dir.h"

namespace flopline::trace {
namespace {

std::string corpus(const std::string& name) {
  return std::string(FLOPLINE_CORPUS_DIR) + "/" + name;
}

struct CorpusFile {
  const char* name;
  std::uint64_t events;
};

// From ../shared/corpus/traces/SOURCES.md.
const CorpusFile kCorpus[] = {
    {"hta__simple_add_a100_kineto.json.gz", 1348},
    {"hta__mi250_rocm_kineto.json.gz", 220},
    {"hta__ns_resolution_rank0.pt.trace.json.gz", 68692},
    {"hta__mtia_rank_0.json.gz", 455739},
    {"hta__nccl_data.json.gz", 40573},
    {"hta__triton_example.json.gz", 71},
    {"kineto__resnet50_v100_worker0.pt.trace.json.gz", 75718},
    {"catapult__trivial_trace.json", 4},
    {"catapult__simple_trace.json", 37},
    {"catapult__async_begin_end.json", 35},
    {"catapult__nestable_async.json", 20},
    {"catapult__flow.json", 5017},
    {"catapult__instance_counters.json", 12},
    {"catapult__nanoseconds.json", 16},
    {"catapult__lthi_cats.json.gz", 67595},
    {"catapult__fuchsia_trace.json.gz", 137093},
    {"catapult__webview.json.gz", 9334},
    {"catapult__multiple_input_latency.json", 18023},
    {"catapult__trace-with-bad-world-bounds.json", 10},
    {"speedscope__chrome116_devtools_export.json", 3108},
    {"speedscope__hermes-multi-thread-with-samples.json", 4},
    {"speedscope__simple-partial.json", 6},
    {"speedscope__simple-partial-trailing-comma.json", 6},
    {"clang__ftime-trace_clang19_main.json", 747},
    {"clang__ftime-trace_verylong-symbol-name.json", 234},
    {"perfetto__flow_events_json_v2.json", 8},
};

std::uint64_t skipped_for(const Trace& t, std::string_view reason) {
  for (const auto& [r, n] : t.report.skip_reasons) {
    if (r == reason) return n;
  }
  return 0;
}

bool has_warning(const Trace& t, std::string_view text) {
  return std::any_of(t.report.warnings.begin(), t.report.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

std::size_t joined_flows(const Trace& t) {
  return static_cast<std::size_t>(
      std::count_if(t.flows.begin(), t.flows.end(), [](const Flow& f) { return f.joined(); }));
}

// The first slice named `name` (any track), or nullptr.
const Slice* find_slice(const Trace& t, std::string_view name) {
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (t.str(s.name) == name) return &s;
      }
    }
  }
  return nullptr;
}

std::size_t instants_with_phase(const Trace& t, char phase) {
  std::size_t n = 0;
  for (const Track& track : t.tracks) {
    for (const Instant& i : track.instants) n += i.phase == phase;
  }
  return n;
}

class CorpusTest : public ::testing::TestWithParam<CorpusFile> {
 protected:
  void SetUp() override { FLOPLINE_SKIP_WITHOUT_CORPUS(); }
};

class ReaderCorpus : public ::testing::Test {
 protected:
  void SetUp() override { FLOPLINE_SKIP_WITHOUT_CORPUS(); }
};

TEST_P(CorpusTest, OpensWithEveryEventAccountedFor) {
  const CorpusFile f = GetParam();
  ReadResult r = read_chrome_trace_file(corpus(f.name));
  ASSERT_TRUE(r.ok()) << r.error->message();
  const TraceReport& rep = r.trace.report;
  EXPECT_EQ(rep.events_total, f.events);
  // Each entry is loaded, applied as metadata, or skipped with a reason: never lost.
  EXPECT_EQ(rep.events_loaded + rep.events_metadata + rep.events_skipped, rep.events_total);
  std::uint64_t reasons = 0;
  for (const auto& kv : rep.skip_reasons) reasons += kv.second;
  EXPECT_EQ(reasons, rep.events_skipped);
  EXPECT_GT(rep.events_loaded, 0u);
  // Finalized: every row sorted by start, nesting rows never overlapping.
  for (const Track& t : r.trace.tracks) {
    for (std::size_t row = 0; row < t.rows.size(); ++row) {
      for (std::size_t i = 1; i < t.rows[row].size(); ++i) {
        ASSERT_LE(t.rows[row][i - 1].start, t.rows[row][i].start) << f.name;
        ASSERT_LE(t.rows[row][i - 1].end(), t.rows[row][i].start) << f.name << " row " << row;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFiles, CorpusTest, ::testing::ValuesIn(kCorpus),
                         [](const ::testing::TestParamInfo<CorpusFile>& param) {
                           std::string n = param.param.name;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST_F(ReaderCorpus, CatapultFlowHasThreeUnclosedB) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__flow.json"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(has_warning(r.trace, "3 B events never closed")) << r.trace.report.warnings.size();
  // 1,625 B; 1,622 E each close one; 3 closed at the end: one slice per B.
  EXPECT_EQ(r.trace.slice_count(), 1625u);
}

TEST_F(ReaderCorpus, LthiOneUnclosedBOneOrphanEAndObjectEvents) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__lthi_cats.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(has_warning(r.trace, "1 B events never closed"));
  EXPECT_EQ(skipped_for(r.trace, "E with no open B on its thread"), 1u);
  // O/N/D are kept as instants with their phase (counts from SOURCES.md).
  EXPECT_EQ(instants_with_phase(r.trace, 'O'), 146u);
  EXPECT_EQ(instants_with_phase(r.trace, 'N'), 16u);
  EXPECT_EQ(instants_with_phase(r.trace, 'D'), 498u);
  EXPECT_EQ(r.trace.counter_point_count(), 1627u);  // every C has one numeric member
}

// Kineto 2021 writes the launching thread as "tid":"25738" on X events and as
// "tid":25738 on the flow's "s" event. python3 over the file (pair each s/f id, look
// for an X enclosing each end on the same (pid, tid)) finds 9,096 pairs: all 9,096
// join when "25738" and 25738 are one thread, none when they are not.
TEST_F(ReaderCorpus, KinetoResnetLaunchFlowsJoinThroughStringTids) {
  ReadResult r = read_chrome_trace_file(corpus("kineto__resnet50_v100_worker0.pt.trace.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.flows.size(), 9096u);
  EXPECT_EQ(joined_flows(r.trace), 9096u);
  // GPU streams are string tids ("stream 7") under pid 0, and Kernel marks them.
  std::size_t streams = 0;
  for (const Track& t : r.trace.tracks) {
    if (t.kind != TrackKind::kGpuStream) continue;
    ++streams;
    EXPECT_TRUE(r.trace.processes[t.process].is_gpu);
    EXPECT_EQ(r.trace.str(t.tid_label).substr(0, 7), "stream ");
  }
  EXPECT_GT(streams, 0u);
  // The last event has pid "" and tid "": taken as 0, loaded.
  EXPECT_EQ(r.trace.report.events_skipped, 0u);
}

// python3: 155 s and 315 f in ac2g/fwdbwd; 139 ids have exactly one s and one f
// (18 of them with the f a few us before the s: two clocks), and both ends of all
// 139 are enclosed by an X on their thread. The other f/s have no partner.
TEST_F(ReaderCorpus, HtaSimpleAddFlows) {
  ReadResult r = read_chrome_trace_file(corpus("hta__simple_add_a100_kineto.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.flows.size(), 139u);
  EXPECT_EQ(joined_flows(r.trace), 139u);
  EXPECT_EQ(skipped_for(r.trace, "flow step or end (t/f) with no start"), 176u);
  EXPECT_EQ(skipped_for(r.trace, "flow start (s) with no step or end"), 16u);
  ASSERT_EQ(r.trace.devices.size(), 8u);
  EXPECT_EQ(r.trace.devices[3].id, 3);
  EXPECT_NE(r.trace.devices[3].name.find("A100"), std::string::npos) << r.trace.devices[3].name;
  EXPECT_EQ(r.trace.devices[3].num_sms, 108);
}

// "ts": 1712195495519695.812 is 17 significant digits: a double would round it.
TEST_F(ReaderCorpus, SeventeenDigitTimestampsAreExact) {
  ReadResult r = read_chrome_trace_file(corpus("hta__ns_resolution_rank0.pt.trace.json.gz"));
  ASSERT_TRUE(r.ok());
  const Slice* s = find_slice(r.trace, "DivBackward1");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->start, 1712195495519695812);
  EXPECT_EQ(s->dur, 53090);
  EXPECT_EQ(r.trace.base_time_ns, 0);
  // Unusual top-level keys are kept for the writer.
  bool has_mast = false;
  for (const auto& kv : r.trace.extra_top_level) has_mast |= kv.first == "mast_job_name";
  EXPECT_TRUE(has_mast);
}

TEST_F(ReaderCorpus, BaseTimeIsAddedToEveryTime) {
  ReadResult r = read_chrome_trace_file(corpus("hta__mi250_rocm_kineto.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.base_time_ns, 1735632360000000000);
  const Slice* s = find_slice(r.trace, "autograd::engine::evaluate_function: MseLossBackward0");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->start, 1735632360000000000 + 4203669604595407);  // base + "ts": 4203669604595.407
  EXPECT_EQ(s->dur, 340024);
}

TEST_F(ReaderCorpus, HermesStringTsAndTid) {
  ReadResult r =
      read_chrome_trace_file(corpus("speedscope__hermes-multi-thread-with-samples.json"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.trace.slice_count(), 2u);
  const Slice* s = find_slice(r.trace, "mqt_js");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->start, 11550183666000);
  // "tid":"1" carries the thread_name "mqt_js"; the X with "tid":"1" is on it.
  bool named = false;
  for (const Track& t : r.trace.tracks) {
    if (t.tid == 1 && r.trace.str(t.name) == "mqt_js") named = t.slice_count() == 1;
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(r.trace.processes.size(), 1u);
  EXPECT_EQ(r.trace.str(r.trace.processes[0].name), "hermes");
}

TEST_F(ReaderCorpus, WebviewV2FlowsHexIdsAndClockSync) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__webview.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(skipped_for(r.trace, "clock sync (c) not used"), 1u);
  EXPECT_EQ(instants_with_phase(r.trace, 'R'), 73u);
  EXPECT_GT(r.trace.flows.size(), 0u);
  EXPECT_EQ(joined_flows(r.trace), r.trace.flows.size());
  // Some v2 flow ids are above INT64_MAX ("0xaf4f9533...").
  EXPECT_TRUE(std::any_of(r.trace.flows.begin(), r.trace.flows.end(),
                          [](const Flow& f) { return f.id > 0x7fffffffffffffffull; }));
}

// Perfetto's expected result for this file: SenderB -> Blergh, SenderA -> OtherSlice,
// OtherSlice -> SomeSlice (OtherSlice has flow_in and flow_out); SomeOtherSlice's
// flow_in finds nothing open.
TEST_F(ReaderCorpus, PerfettoV2Flows) {
  ReadResult r = read_chrome_trace_file(corpus("perfetto__flow_events_json_v2.json"));
  ASSERT_TRUE(r.ok());
  std::multimap<std::string, std::string> arrows;
  for (const Flow& f : r.trace.flows) {
    ASSERT_TRUE(f.joined());
    const Slice& from = r.trace.tracks[f.from.slice.track].at(f.from.slice);
    const Slice& to = r.trace.tracks[f.to.slice.track].at(f.to.slice);
    arrows.emplace(std::string(r.trace.str(from.name)), std::string(r.trace.str(to.name)));
  }
  const std::multimap<std::string, std::string> expected = {
      {"SenderA", "OtherSlice"}, {"OtherSlice", "SomeSlice"}, {"SenderB", "Blergh"}};
  EXPECT_EQ(arrows, expected);
}

TEST_F(ReaderCorpus, InstanceCountersAreNamedWithTheirId) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__instance_counters.json"));
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r.trace.counters.empty());
  for (const CounterSeries& c : r.trace.counters) {
    const std::string_view name = r.trace.str(c.name);
    EXPECT_NE(name.find('['), std::string_view::npos) << name;
    EXPECT_EQ(name.back(), ']');
  }
  EXPECT_EQ(r.trace.counter_point_count(), 8u);
}

TEST_F(ReaderCorpus, SimpleTraceScopesAndMissingIds) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__simple_trace.json"));
  ASSERT_TRUE(r.ok());
  std::map<InstantScope, int> scopes;
  for (const Track& t : r.trace.tracks) {
    for (const Instant& i : t.instants) {
      if (i.phase == 'I') ++scopes[i.scope];
    }
  }
  EXPECT_GT(scopes[InstantScope::kProcess], 0);
  EXPECT_GT(scopes[InstantScope::kGlobal], 0);
  EXPECT_EQ(instants_with_phase(r.trace, 'P'), 3u);
  EXPECT_TRUE(has_warning(r.trace, "E events whose name differs"));
}

TEST_F(ReaderCorpus, AsyncSpans) {
  // Legacy S/F may end in another process ("E" begins in pid 2 and ends in pid 3);
  // "D" has an F (id bf1) before any S and an S (id bf2) never finished.
  ReadResult legacy = read_chrome_trace_file(corpus("catapult__async_begin_end.json"));
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(skipped_for(legacy.trace, "async end (e/F) with no open begin"), 1u);
  std::size_t e_spans = 0;
  for (const Track& t : legacy.trace.tracks) {
    if (t.kind != TrackKind::kAsync) continue;
    for (const auto& row : t.rows) {
      for (const Slice& s : row) e_spans += legacy.trace.str(s.name) == "E" && s.dur > 0;
    }
  }
  EXPECT_EQ(e_spans, 2u);

  ReadResult nestable = read_chrome_trace_file(corpus("catapult__nestable_async.json"));
  ASSERT_TRUE(nestable.ok());
  std::size_t async_slices = 0;
  for (const Track& t : nestable.trace.tracks) {
    if (t.kind == TrackKind::kAsync) async_slices += t.slice_count();
  }
  EXPECT_GE(async_slices, 8u);
  EXPECT_EQ(instants_with_phase(nestable.trace, 'n'), 2u);
}

TEST_F(ReaderCorpus, FuchsiaNulInStringsAndObjectSystemTraceEvents) {
  ReadResult r = read_chrome_trace_file(corpus("catapult__fuchsia_trace.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(has_warning(r.trace, "systemTraceEvents (an object"));
  bool found = false;
  for (std::size_t id = 0; id < r.trace.args.size() && !found; ++id) {
    const auto mode = json_member(r.trace.args.json(static_cast<ArgsId>(id)), "mode");
    if (mode && json_string(*mode) == std::string("basic\0", 6)) found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(joined_flows(r.trace), r.trace.flows.size());
}

TEST_F(ReaderCorpus, HugeStringsAndBigIntegersKept) {
  ReadResult r = read_chrome_trace_file(corpus("clang__ftime-trace_verylong-symbol-name.json"));
  ASSERT_TRUE(r.ok());
  std::size_t longest = 0;
  for (std::size_t id = 0; id < r.trace.args.size(); ++id) {
    if (const auto detail = json_member(r.trace.args.json(static_cast<ArgsId>(id)), "detail")) {
      longest = std::max(longest, detail->size());
    }
  }
  EXPECT_GT(longest, 140000u);

  ReadResult devtools =
      read_chrome_trace_file(corpus("speedscope__chrome116_devtools_export.json"));
  ASSERT_TRUE(devtools.ok());
  bool big = false;
  for (std::size_t id = 0; id < devtools.trace.args.size(); ++id) {
    big |= devtools.trace.args.json(static_cast<ArgsId>(id)).find("18446744064077150000") !=
           std::string_view::npos;
  }
  EXPECT_TRUE(big);
}

TEST_F(ReaderCorpus, MtiaRepeatedMetadataAppliedOnce) {
  ReadResult r = read_chrome_trace_file(corpus("hta__mtia_rank_0.json.gz"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_metadata, 310046u);
  // Repeating the same process_name 62,000 times creates nothing new.
  EXPECT_EQ(r.trace.processes.size(), 5u);
  for (const Process& p : r.trace.processes) {
    if (p.pid == 9) {
      EXPECT_EQ(r.trace.str(p.name), "MTIA 9");
    }
  }
}

TEST_F(ReaderCorpus, PartialFilesWarnAboutTheMissingBracket) {
  for (const char* name :
       {"speedscope__simple-partial.json", "speedscope__simple-partial-trailing-comma.json"}) {
    ReadResult r = read_chrome_trace_file(corpus(name));
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_TRUE(has_warning(r.trace, "no closing ']'")) << name;
    EXPECT_EQ(r.trace.report.events_loaded, 6u) << name;
  }
}

}  // namespace
}  // namespace flopline::trace
