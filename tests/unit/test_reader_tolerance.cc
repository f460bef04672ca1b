// What real tools write that strict JSON readers reject, and the envelope members
// the model understands: each accepted and turned into the right model.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"
#include "reader_test_util.h"

namespace flopline::trace {
namespace {

using test::has_warning;
using test::skipped_for;
ReadResult read(std::string_view text) {
  return test::read_ok(text);
}

// The only slice of the trace (tests below write one X event).
const Slice& only_slice(const ReadResult& r) {
  for (const Track& t : r.trace.tracks) {
    for (const auto& row : t.rows) {
      if (!row.empty()) return row.front();
    }
  }
  static const Slice none{};
  ADD_FAILURE() << "no slice";
  return none;
}

std::string_view args_of(const ReadResult& r, const Slice& s) {
  return s.args == kNoArgs ? std::string_view() : r.trace.args.json(s.args);
}

TEST(ReaderTolerance, BothTopLevelForms) {
  const char* event = R"({"ph":"X","ts":1,"dur":2,"name":"a","pid":1,"tid":2})";
  ReadResult array = read(std::string("[") + event + "]");
  ReadResult object = read(std::string(R"({"traceEvents":[)") + event + "]}");
  EXPECT_EQ(array.trace.slice_count(), 1u);
  EXPECT_EQ(object.trace.slice_count(), 1u);
  EXPECT_TRUE(array.trace.report.warnings.empty());
  EXPECT_TRUE(object.trace.report.warnings.empty());
  ReadResult bom = read(std::string("\xef\xbb\xbf[") + event + "]");
  EXPECT_EQ(bom.trace.slice_count(), 1u);
}

TEST(ReaderTolerance, TrailingCommasAndMissingBrackets) {
  ReadResult r = read(R"({"traceEvents":[{"ph":"X","ts":1,"name":"a","args":{"k":[1,2,],},},],})");
  EXPECT_EQ(r.trace.slice_count(), 1u);
  EXPECT_EQ(args_of(r, only_slice(r)), R"({"k":[1,2]})");  // stored as strict JSON

  ReadResult unclosed = read(R"([{"ph":"X","ts":1,"name":"a"},)");
  EXPECT_EQ(unclosed.trace.report.events_total, 1u);
  EXPECT_TRUE(has_warning(unclosed, "no closing ']'"));

  ReadResult no_brace = read(R"({"traceEvents":[{"ph":"X","ts":1,"name":"a"}])");
  EXPECT_EQ(no_brace.trace.slice_count(), 1u);
  EXPECT_TRUE(has_warning(no_brace, "no closing '}'"));

  ReadResult empty = read(R"({"traceEvents":[]})");
  EXPECT_TRUE(has_warning(empty, "no events"));
}

TEST(ReaderTolerance, SystemTraceEventsIgnoredInAnyForm) {
  for (const char* value : {R"("# tracer: nop\n")", "[]", R"({"type":"fuchsia","events":[1,2]})"}) {
    ReadResult r =
        read(std::string(R"({"traceEvents":[{"ph":"i","ts":1,"name":"a"}],"systemTraceEvents":)") +
             value + "}");
    EXPECT_TRUE(has_warning(r, "systemTraceEvents (")) << value;
    EXPECT_TRUE(r.trace.extra_top_level.empty()) << value;
  }
}

TEST(ReaderTolerance, UnknownTopLevelMembersKeptUnlessHuge) {
  const std::string big(2u << 20, 'x');
  ReadResult r =
      read(R"({"schemaVersion":1,"traceEvents":[{"ph":"i","ts":1}],"metadata":{"a":[1,NaN,]},)"
           R"("big":")" +
           big + R"(","traceName":"n"})");
  std::vector<std::string> keys;
  for (const auto& kv : r.trace.extra_top_level) keys.push_back(kv.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"schemaVersion", "metadata", "traceName"}));
  EXPECT_EQ(r.trace.extra_top_level[1].second, R"({"a":[1,null]})");
  EXPECT_EQ(r.trace.extra_top_level[2].second, R"("n")");
  EXPECT_TRUE(has_warning(r, "\"big\""));
}

TEST(ReaderTolerance, DeviceProperties) {
  ReadResult r =
      read(R"({"deviceProperties":[{"id":1,"name":"NVIDIA H200","numSms":132,"computeMajor":9,)"
           R"("computeMinor":0,"totalGlobalMem":150110011392,"clockRateKHz":1980000,)"
           R"("memoryClockRateKHz":2619000,"memoryBusWidth":6144,"warpSize":32,)"
           R"("peakFlops":{"fp32":6.7e13,"bf16":9.89e14},"peakBandwidthBytesPerSec":4.8e12,)"
           R"("peakSource":"table"}, 5],"traceEvents":[{"ph":"i","ts":1}]})");
  ASSERT_EQ(r.trace.devices.size(), 1u);
  const DeviceProperties& d = r.trace.devices[0];
  EXPECT_EQ(d.id, 1);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.num_sms, 132);
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_EQ(d.compute_minor, 0);
  EXPECT_EQ(d.total_global_mem, 150110011392u);
  EXPECT_EQ(d.clock_khz, 1980000);
  EXPECT_EQ(d.memory_clock_khz, 2619000);
  EXPECT_EQ(d.memory_bus_width, 6144);
  EXPECT_DOUBLE_EQ(d.peak_flops_for("fp32"), 6.7e13);
  EXPECT_DOUBLE_EQ(d.peak_flops_for("bf16"), 9.89e14);
  EXPECT_DOUBLE_EQ(d.peak_bytes_per_s, 4.8e12);
  EXPECT_EQ(d.peak_source, "table");
  EXPECT_EQ(json_int(*json_member(d.raw_json, "warpSize")), 32);
}

TEST(ReaderTolerance, FloplineInfoAndDroppedRecords) {
  ReadResult r = read(R"({"traceEvents":[{"ph":"i","ts":1}],"flopline":{"version":"0.1.0",)"
                      R"("command":"python \"x.py\"","kernels":12,"droppedRecords":7}})");
  EXPECT_EQ(r.trace.report.dropped_records, 7u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"version", "0.1.0"}, {"command", "python \"x.py\""}, {"kernels", "12"}};
  EXPECT_EQ(r.trace.info, expected);
}

TEST(ReaderTolerance, BaseTimeMayComeAfterTheEvents) {
  ReadResult r = read(
      R"({"traceEvents":[{"ph":"X","ts":1.5,"dur":1,"name":"a"},{"ph":"i","ts":3,"name":"b"},)"
      R"({"ph":"C","ts":4,"name":"c","args":{"v":1}}],"baseTimeNanoseconds":1700000000000000000})");
  EXPECT_EQ(r.trace.base_time_ns, 1700000000000000000);
  EXPECT_EQ(only_slice(r).start, 1700000000000001500);
  const auto bounds = r.trace.time_bounds();
  EXPECT_EQ(bounds.first, 1700000000000001500);
  EXPECT_EQ(bounds.second, 1700000000000004000);
  EXPECT_EQ(r.trace.counters.at(0).points.at(0).ts, 1700000000000004000);
}

// A file cut inside baseTimeNanoseconds: its first digits (1700 ns for 1.7e18) would
// move every time; none is taken, and the warning says so.
TEST(ReaderTolerance, ABaseTimeCutOffByTheEndOfTheFileIsNotTaken) {
  ReadResult r = read(R"({"traceEvents":[{"ph":"X","ts":1.5,"dur":1,"name":"a"}],)"
                      R"("baseTimeNanoseconds":1700)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(only_slice(r).start, 1500);
  bool said = false;
  for (const std::string& w : r.trace.report.warnings)
    said = said || w.find("baseTimeNanoseconds is cut off") != std::string::npos;
  EXPECT_TRUE(said);
  // Whole and closed, the same digits are taken.
  ReadResult whole = read(R"({"traceEvents":[{"ph":"X","ts":1.5,"dur":1,"name":"a"}],)"
                          R"("baseTimeNanoseconds":1700})");
  EXPECT_EQ(only_slice(whole).start, 3200);
}

TEST(ReaderTolerance, PidAndTidForms) {
  ReadResult r = read(R"([{"ph":"X","ts":1,"name":"a","pid":"7","tid":"25738"},)"
                      R"({"ph":"X","ts":2,"name":"b","pid":7,"tid":25738},)"
                      R"({"ph":"X","ts":3,"name":"c","pid":7,"tid":-1},)"
                      R"({"ph":"X","ts":4,"name":"d","pid":"","tid":""},)"
                      R"({"ph":"X","ts":5,"name":"e"},)"
                      R"({"ph":"X","ts":6,"name":"f","pid":"Spans","tid":"PyTorch Profiler"},)"
                      R"({"ph":"X","ts":7,"name":"g","pid":99999999999999999999,"tid":1.5}])");
  const Trace& t = r.trace;
  auto track_of = [&](std::string_view name) -> const Track* {
    for (const Track& track : t.tracks) {
      for (const auto& row : track.rows) {
        for (const Slice& s : row) {
          if (t.str(s.name) == name) return &track;
        }
      }
    }
    return nullptr;
  };
  EXPECT_EQ(track_of("a"), track_of("b"));  // "25738" and 25738 are one thread
  EXPECT_EQ(t.processes[track_of("a")->process].pid, 7);
  EXPECT_EQ(track_of("c")->tid, -1);
  EXPECT_EQ(track_of("d"), track_of("e"));  // "" and missing are both 0
  EXPECT_EQ(t.processes[track_of("e")->process].pid, 0);
  EXPECT_EQ(t.str(t.processes[track_of("f")->process].pid_label), "Spans");
  EXPECT_EQ(t.str(track_of("f")->tid_label), "PyTorch Profiler");
  EXPECT_EQ(t.str(t.processes[track_of("g")->process].pid_label), "99999999999999999999");
  EXPECT_EQ(t.str(track_of("g")->tid_label), "1.5");
}

TEST(ReaderTolerance, TimestampsAsTextAreExact) {
  ReadResult r = read(R"([{"ph":"X","ts":"1712195495519695.8","dur":"0.0005","name":"a"},)"
                      R"({"ph":"X","ts":1.69e3,"dur":1E-3,"name":"b"},)"
                      R"({"ph":"X","ts":1712195495519695.8125,"dur":-1,"name":"c"}])");
  std::vector<std::pair<TimeNs, TimeNs>> got;
  for (const Track& t : r.trace.tracks) {
    for (const auto& row : t.rows) {
      for (const Slice& s : row) got.emplace_back(s.start, s.dur);
    }
  }
  std::sort(got.begin(), got.end());
  const std::vector<std::pair<TimeNs, TimeNs>> expected = {
      {1690000, 1}, {1712195495519695800, 1}, {1712195495519695813, 0}};
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(has_warning(r, "1 X events with a negative dur"));
}

TEST(ReaderTolerance, NonFiniteNumbers) {
  ReadResult r = read(
      R"([{"ph":"X","ts":NaN,"name":"a"},{"ph":"X","ts":"inf","name":"b"},)"
      R"({"ph":"X","ts":1,"dur":"n/a","name":"c","args":{"v":-Infinity,"w":nan,"s":"NaN"}},)"
      R"({"ph":"X","ts":99999999999999999999,"name":"d"},)"
      R"({"ph":"X","ts":2,"dur":Infinity,"name":"e"},{"ph":"X","ts":3,"dur":NaN,"name":"f"}])");
  EXPECT_EQ(skipped_for(r, "\"ts\" is nan or inf"), 2u);
  EXPECT_EQ(skipped_for(r, "\"ts\" out of range"), 1u);
  // A dur that is a number the model cannot hold is not made 0: the event is skipped.
  EXPECT_EQ(skipped_for(r, "\"dur\" out of range, nan or inf"), 2u);
  EXPECT_EQ(only_slice(r).dur, 0);
  EXPECT_TRUE(has_warning(r, "dur is not a number"));
  EXPECT_EQ(args_of(r, only_slice(r)), R"({"v":null,"w":null,"s":"NaN"})");
}

TEST(ReaderTolerance, StringsWithNulInvalidUtf8AndEscapes) {
  const std::string text = std::string(R"([{"ph":"X","ts":1,"name":"a\u0000b\ud83d\ude00\u00e9)") +
                           "\xff\xfe" + R"(\/\"\q","args":{"raw":")" + "\x01\x80" + R"("}}])";
  ReadResult r = read(text);
  const Slice& s = only_slice(r);
  EXPECT_EQ(r.trace.str(s.name), std::string("a\0b\xf0\x9f\x98\x80\xc3\xa9\xff\xfe/\"\\q", 15));
  // A raw control byte in args is escaped so the stored text is JSON; bytes >= 0x80 stay.
  EXPECT_EQ(args_of(r, s), std::string("{\"raw\":\"\\u0001\x80\"}"));
}

TEST(ReaderTolerance, HugeNamesAndDeepArgs) {
  const std::string name(140 * 1024, 'n');
  std::string deep = "1";
  for (int i = 0; i < 23; ++i) deep = "{\"d\":[" + deep + "]}";
  ReadResult r =
      read(R"([{"ph":"X","ts":1,"name":")" + name + R"(","args":{"deep":)" + deep + "}}]");
  const Slice& s = only_slice(r);
  EXPECT_EQ(r.trace.str(s.name).size(), name.size());
  EXPECT_EQ(*json_member(args_of(r, s), "deep"), deep);
}

TEST(ReaderTolerance, FlopsAndBytesBecomeMetrics) {
  ReadResult r = read(R"([{"ph":"X","ts":1,"dur":2,"name":"gemm","args":{"flops":2e9,"bytes":1024,)"
                      R"("TFLOP/s":3.5,"GB/s":1.0,"grid":[1,2,3]}}])");
  const Slice& s = only_slice(r);
  const SliceMetrics m = r.trace.metrics_of(s);
  EXPECT_DOUBLE_EQ(m.flops, 2e9);
  EXPECT_DOUBLE_EQ(m.bytes, 1024);
  EXPECT_EQ(args_of(r, s), R"({"grid":[1,2,3]})");

  ReadResult only = read(R"([{"ph":"X","ts":1,"name":"k","args":{"flops":10}}])");
  EXPECT_EQ(only_slice(only).args, kNoArgs);
  EXPECT_DOUBLE_EQ(only.trace.metrics_of(only_slice(only)).flops, 10);
  EXPECT_FALSE(only.trace.metrics_of(only_slice(only)).has_bytes());

  // Without flops/bytes, derived-looking keys are someone else's and stay.
  ReadResult other = read(R"([{"ph":"X","ts":1,"name":"k","args":{"GB/s":5,"flops":"many"}}])");
  EXPECT_EQ(args_of(other, only_slice(other)), R"({"GB/s":5,"flops":"many"})");
  EXPECT_EQ(only_slice(other).metrics, kNone);
}

TEST(ReaderTolerance, EmptyArgsStoreNothing) {
  ReadResult r =
      read(R"([{"ph":"X","ts":1,"name":"a","args":{}}, {"ph":"X","ts":2,"name":"b","args":5}])");
  for (const Track& t : r.trace.tracks) {
    for (const auto& row : t.rows) {
      for (const Slice& s : row) EXPECT_EQ(s.args, kNoArgs);
    }
  }
  EXPECT_TRUE(has_warning(r, "args is not an object"));
}

TEST(ReaderTolerance, DuplicateKeysLastWins) {
  ReadResult r = read(R"([{"ph":"i","ts":1,"ph":"X","dur":3,"name":"a","name":"b"}])");
  EXPECT_EQ(r.trace.str(only_slice(r).name), "b");
  EXPECT_EQ(only_slice(r).dur, 3000);
}

}  // namespace
}  // namespace flopline::trace
