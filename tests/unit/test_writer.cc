// The Chrome-trace writer: document layout, each event form, hostile strings, and
// file output (gzip, the .tmp file, errors). Every document is also checked by
// Python's json module, a parser that shares no code with flopline.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/args.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "trace/file_io.h"

namespace flopline::trace {
namespace {

namespace fs = std::filesystem;

template <class... T>
std::string cat(const T&... parts) {  // appends: see test_json_text.cc on -Wrestrict
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// The event lines (between the header line and the footer), without the trailing comma.
std::vector<std::string> events_of(const std::string& text) {
  std::vector<std::string> lines = lines_of(text);
  std::vector<std::string> events;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    std::string e = lines[i];
    if (!e.empty() && e.back() == ',') e.pop_back();
    events.push_back(e);
  }
  return events;
}

bool has_line(const std::string& text, std::string_view line) {
  for (const std::string& e : events_of(text)) {
    if (e == line) return true;
  }
  return false;
}

// One scratch folder per test process, removed when the process ends.
fs::path temp_dir() {
  struct Scratch {
    fs::path dir = fs::temp_directory_path() /
                   cat("flopline_test_writer_", std::to_string(static_cast<long>(::getpid())));
    Scratch() { fs::create_directories(dir); }
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

// Python's json module accepts the file (it rejects NaN only on request, so also check
// that no bare NaN/Infinity tokens were written: parse_constant raises).
bool python_accepts(const fs::path& file) {
  const std::string cmd =
      cat("python3 -c \"import json,sys\n"
          "def bad(c): raise ValueError('non-JSON constant ' + c)\n"
          "json.load(open(sys.argv[1], encoding='utf-8'), parse_constant=bad)\" '",
          file.string(), "'");
  return std::system(cmd.c_str()) == 0;
}

bool python_accepts_text(const std::string& text) {
  const fs::path file = temp_dir() / "check.json";
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) return false;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return python_accepts(file);
}

std::string render(const Trace& t, const WriteOptions& opt = {}) {
  std::string out;
  render_chrome_trace(t, out, opt);
  return out;
}

// A small trace of each kind of event, at known times.
struct Small {
  Trace t;
  TraceBuilder b{t};
  std::uint32_t cpu_proc, gpu_proc, thread, stream;
  static constexpr TimeNs kBase = 1'700'000'000'000'000'000;

  Small() {
    cpu_proc = b.process(4242);
    t.processes[cpu_proc].name = t.strings.intern("python");
    t.processes[cpu_proc].sort_index = 5;
    gpu_proc = b.process(0);
    t.processes[gpu_proc].labels = t.strings.intern("GPU 0");
    thread = b.track(cpu_proc, 4243);
    t.tracks[thread].name = t.strings.intern("MainThread");
    stream = b.track(gpu_proc, 7, TrackKind::kGpuStream);
    t.processes[gpu_proc].is_gpu = true;  // what the writer keys GPU pids on
  }
  StringId s(std::string_view text) { return t.strings.intern(text); }
  Slice slice(std::string_view name, std::string_view category, TimeNs start, TimeNs dur,
              ArgsId args = kNoArgs) {
    Slice sl;
    sl.start = start;
    sl.dur = dur;
    sl.name = s(name);
    sl.cat = s(category);
    sl.args = args;
    return sl;
  }
};

TEST(Writer, EnvelopeKeysInOrderAndOneEventPerLine) {
  Small x;
  x.b.add_slice(x.thread, x.slice("launch", "cuda_runtime", Small::kBase + 1000, 2500));
  x.b.add_slice(x.stream, x.slice("k", "kernel", Small::kBase + 1234567, 1500));
  x.b.finalize();
  const std::string text = render(x.t);

  EXPECT_EQ(text.rfind("{\"schemaVersion\":1,\"deviceProperties\":[]", 0), 0u) << text;
  std::size_t last = 0;
  for (const char* key :
       {"\"schemaVersion\":", "\"deviceProperties\":", "\"displayTimeUnit\":\"ms\"",
        "\"baseTimeNanoseconds\":", "\"traceEvents\":[\n", "\"flopline\":{"}) {
    const std::size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key;
    last = at;
  }
  EXPECT_NE(text.find("\"baseTimeNanoseconds\":1700000000000001000,"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");

  const std::vector<std::string> lines = lines_of(text);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.front().substr(lines.front().size() - 15), "\"traceEvents\":[");
  EXPECT_EQ(lines.back().rfind("],\"flopline\":{", 0), 0u);
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("{\"ph\":\"", 0), 0u) << lines[i];
    const bool last_event = i + 2 == lines.size();
    EXPECT_EQ(lines[i].substr(lines[i].size() - (last_event ? 1 : 2)), last_event ? "}" : "},")
        << lines[i];
  }
  // Metadata first: process 4242's three... then the slices.
  EXPECT_EQ(
      lines[1],
      R"({"ph":"M","name":"process_name","pid":4242,"tid":0,"ts":0.000,"cat":"__metadata","args":{"name":"python"}},)");
  EXPECT_TRUE(has_line(
      text,
      R"({"ph":"X","cat":"cuda_runtime","name":"launch","pid":4242,"tid":4243,"ts":0.000,"dur":2.500})"));
  EXPECT_TRUE(has_line(
      text, R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1233.567,"dur":1.500})"));
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, EveryTimeHasExactlyThreeDecimals) {
  Small x;
  TimeNs t0 = Small::kBase;
  for (TimeNs d : {0, 1, 10, 100, 999, 1000, 123456789}) {
    x.b.add_slice(x.thread, x.slice("s", "c", t0, d));
    Instant in;
    in.ts = t0 + d;
    in.name = x.s("i");
    x.b.add_instant(x.thread, in);
    t0 += 2 * d + 1;
  }
  const std::uint32_t series = x.b.counter_series(x.cpu_proc, x.s("mem"), x.s("bytes"), 0);
  x.b.add_counter_point(series, Small::kBase + 17, 1.5);
  x.b.finalize();
  const std::string text = render(x.t);
  // Every "ts" and "dur" value: digits, a point, exactly three digits, then , or }.
  int count = 0;
  for (const std::string_view key : {"\"ts\":", "\"dur\":"}) {
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      ++count;
      std::size_t i = at + key.size();
      if (text[i] == '-') ++i;
      const std::size_t digits = i;
      while (std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      EXPECT_GT(i, digits) << text.substr(at, 30);
      ASSERT_EQ(text[i], '.') << text.substr(at, 30);
      for (int k = 1; k <= 3; ++k)
        EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text[i + k])));
      EXPECT_TRUE(text[i + 4] == ',' || text[i + 4] == '}') << text.substr(at, 30);
    }
  }
  // Slices' ts and dur, instants, the counter point, and each metadata event's ts.
  std::size_t meta = 0;
  for (std::size_t at = text.find("\"ph\":\"M\""); at != std::string::npos;
       at = text.find("\"ph\":\"M\"", at + 1))
    ++meta;
  EXPECT_GT(meta, 0u);
  EXPECT_EQ(count, 7 * 2 + 7 + 1 + static_cast<int>(meta));
  EXPECT_TRUE(has_line(
      text, R"({"ph":"X","cat":"c","name":"s","pid":4242,"tid":4243,"ts":0.025,"dur":0.100})"));
  EXPECT_TRUE(has_line(
      text, R"({"ph":"C","name":"mem","cat":"","pid":4242,"ts":0.017,"args":{"bytes":1.5}})"));
}

TEST(Writer, EmptyTrace) {
  Trace t;
  const std::string text = render(t);
  const std::string_view head =
      R"({"schemaVersion":1,"deviceProperties":[],"displayTimeUnit":"ms",)"
      R"("baseTimeNanoseconds":0,"traceEvents":[)"
      "\n"
      R"(],"flopline":{"version":")";
  const std::string_view tail = R"(","droppedRecords":0}})"
                                "\n";
  ASSERT_GT(text.size(), head.size() + tail.size());
  EXPECT_EQ(text.substr(0, head.size()), head);
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
  const std::string version = text.substr(head.size(), text.size() - head.size() - tail.size());
  EXPECT_EQ(version.find_first_not_of("0123456789."), std::string::npos) << version;
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, MetadataForProcessesAndTracks) {
  Small x;
  const std::uint32_t named = x.b.track(x.gpu_proc, 9, TrackKind::kGpuStream);
  x.t.tracks[named].name = x.s("copy stream");
  x.t.tracks[named].sort_index = -3;
  const std::uint32_t labelled = x.b.process("Spans");
  const std::uint32_t lt = x.b.track(labelled, "worker-1");
  x.b.finalize();
  WriteOptions opt;
  opt.id_namespace = 1000;
  const std::string text = render(x.t, opt);
  for (
      const char* line : {
          R"({"ph":"M","name":"process_name","pid":4242,"tid":0,"ts":0.000,"cat":"__metadata","args":{"name":"python"}})",
          R"({"ph":"M","name":"process_sort_index","pid":4242,"tid":0,"ts":0.000,"cat":"__metadata","args":{"sort_index":5}})",
          R"({"ph":"M","name":"process_labels","pid":1000,"tid":0,"ts":0.000,"cat":"__metadata","args":{"labels":"GPU 0"}})",
          R"({"ph":"M","name":"process_sort_index","pid":1000,"tid":0,"ts":0.000,"cat":"__metadata","args":{"sort_index":0}})",
          R"({"ph":"M","name":"thread_name","pid":4242,"tid":4243,"ts":0.000,"cat":"__metadata","args":{"name":"MainThread"}})",
          R"({"ph":"M","name":"thread_sort_index","pid":4242,"tid":4243,"ts":0.000,"cat":"__metadata","args":{"sort_index":4243}})",
          R"({"ph":"M","name":"thread_name","pid":1000,"tid":7,"ts":0.000,"cat":"__metadata","args":{"name":"stream 7"}})",
          R"({"ph":"M","name":"thread_name","pid":1000,"tid":9,"ts":0.000,"cat":"__metadata","args":{"name":"copy stream"}})",
          R"({"ph":"M","name":"thread_sort_index","pid":1000,"tid":9,"ts":0.000,"cat":"__metadata","args":{"sort_index":-3}})",
          R"({"ph":"M","name":"process_sort_index","pid":"Spans","tid":0,"ts":0.000,"cat":"__metadata","args":{"sort_index":-1000000000}})",
      }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  // A string tid keeps its text; a process without a name gets no process_name.
  EXPECT_NE(text.find(R"("pid":"Spans","tid":"worker-1","ts":0.000,"cat":"__metadata","args":{)"
                      R"("sort_index":)"),
            std::string::npos);
  EXPECT_EQ(text.find(R"("name":"process_name","pid":1000)"), std::string::npos);
  EXPECT_EQ(text.find(R"("name":"thread_name","pid":"Spans")"), std::string::npos);
  (void)lt;
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, SliceArgsAndMetrics) {
  Small x;
  ArgsBuilder a;
  const ArgsId args = x.t.args.add_json(a.add("device", 0).add_ints("grid", {4, 1, 1}).finish());
  Slice with_both = x.slice("mm", "kernel", Small::kBase, 2000, args);
  with_both.metrics = x.b.add_metrics({4e9, 3e6});
  x.b.add_slice(x.stream, with_both);
  Slice metrics_only = x.slice("op", "user_annotation", Small::kBase, 4000);
  metrics_only.metrics = x.b.add_metrics({8e9, -1});
  x.b.add_slice(x.thread, metrics_only);
  Slice zero = x.slice("z", "kernel", Small::kBase + 5000, 0);
  zero.metrics = x.b.add_metrics({100, 200});
  x.b.add_slice(x.stream, zero);
  Slice unknown = x.slice("u", "kernel", Small::kBase + 6000, 10);
  unknown.metrics = x.b.add_metrics({-1, -1});
  x.b.add_slice(x.stream, unknown);
  // Capture may have put "bytes" in args already: it is not repeated.
  const ArgsId has_bytes = x.t.args.add_json(R"({"bytes":64})");
  Slice copy = x.slice("memcpy", "gpu_memcpy", Small::kBase + 7000, 1000, has_bytes);
  copy.metrics = x.b.add_metrics({-1, 64});
  x.b.add_slice(x.stream, copy);
  // "bytes" as a string value is not the key.
  Slice unit =
      x.slice("unit", "kernel", Small::kBase + 8000, 500, x.t.args.add_json(R"({"unit":"bytes"})"));
  unit.metrics = x.b.add_metrics({-1, 500});
  x.b.add_slice(x.stream, unit);
  Slice empty_args = x.slice("e", "kernel", Small::kBase + 9000, 1000, x.t.args.add_json("{ }"));
  empty_args.metrics = x.b.add_metrics({1000, -1});
  x.b.add_slice(x.stream, empty_args);
  x.b.finalize();
  const std::string text = render(x.t);
  for (
      const char* line : {
          R"({"ph":"X","cat":"kernel","name":"mm","pid":0,"tid":7,"ts":0.000,"dur":2.000,"args":{"device":0,"grid":[4,1,1],"flops":4000000000,"bytes":3000000,"TFLOP/s":2000,"GB/s":1500}})",
          R"({"ph":"X","cat":"user_annotation","name":"op","pid":4242,"tid":4243,"ts":0.000,"dur":4.000,"args":{"flops":8000000000,"TFLOP/s":2000}})",
          R"({"ph":"X","cat":"kernel","name":"z","pid":0,"tid":7,"ts":5.000,"dur":0.000,"args":{"flops":100,"bytes":200}})",
          R"({"ph":"X","cat":"kernel","name":"u","pid":0,"tid":7,"ts":6.000,"dur":0.010})",
          R"({"ph":"X","cat":"gpu_memcpy","name":"memcpy","pid":0,"tid":7,"ts":7.000,"dur":1.000,"args":{"bytes":64,"GB/s":0.064}})",
          R"({"ph":"X","cat":"kernel","name":"unit","pid":0,"tid":7,"ts":8.000,"dur":0.500,"args":{"unit":"bytes","bytes":500,"GB/s":1}})",
          R"({"ph":"X","cat":"kernel","name":"e","pid":0,"tid":7,"ts":9.000,"dur":1.000,"args":{"flops":1000,"TFLOP/s":0.001}})",
      }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, AsyncInstantsCountersFlows) {
  Small x;
  const std::uint32_t async = x.b.track(x.cpu_proc, 1, TrackKind::kAsync);
  x.b.add_slice(
      async, x.slice("req", "async", Small::kBase + 100, 900, x.t.args.add_json(R"({"id":"r1"})")));
  const char phases[] = {'i', 'I', 'R', 'P', 'O', 'N', 'D'};
  TimeNs ts = Small::kBase;
  for (char ph : phases) {
    Instant in;
    in.ts = ts++;
    in.phase = ph;
    in.name = x.s(std::string(1, ph));
    in.scope = ph == 'I' ? InstantScope::kGlobal : InstantScope::kThread;
    x.b.add_instant(x.thread, in);
  }
  const std::uint32_t series = x.b.counter_series(x.gpu_proc, x.s("util"), x.s("pct"), x.s("gpu"));
  x.b.add_counter_point(series, Small::kBase + 50, std::numeric_limits<double>::quiet_NaN());
  x.b.add_counter_point(series, Small::kBase + 60, 99.5);
  x.b.add_slice(x.thread, x.slice("cudaLaunchKernel", "cuda_runtime", Small::kBase + 10, 50));
  x.b.add_slice(x.stream, x.slice("k", "kernel", Small::kBase + 100, 50));
  Flow f;
  f.id = 77;
  f.name = x.s("ac2g");
  f.cat = x.s("ac2g");
  f.from = {x.thread, Small::kBase + 10, true, {}};
  f.to = {x.stream, Small::kBase + 100, true, {}};
  x.b.add_flow(f);
  f.id = 78;
  f.to.enclosing = false;
  x.b.add_flow(f);
  x.b.finalize();
  WriteOptions opt;
  opt.id_namespace = 1'000'000;
  const std::string text = render(x.t, opt);
  for (
      const char* line : {
          R"({"ph":"b","cat":"async","name":"req","pid":4242,"id":1000001,"ts":0.100,"args":{"id":"r1"}})",
          R"({"ph":"e","cat":"async","name":"req","pid":4242,"id":1000001,"ts":1.000})",
          R"({"ph":"i","cat":"","name":"i","pid":4242,"tid":4243,"ts":0.000,"s":"t"})",
          R"({"ph":"I","cat":"","name":"I","pid":4242,"tid":4243,"ts":0.001,"s":"g"})",
          R"({"ph":"R","cat":"","name":"R","pid":4242,"tid":4243,"ts":0.002})",
          R"({"ph":"P","cat":"","name":"P","pid":4242,"tid":4243,"ts":0.003})",
          R"({"ph":"C","name":"util","cat":"gpu","pid":1000000,"ts":0.050,"args":{"pct":null}})",
          R"({"ph":"C","name":"util","cat":"gpu","pid":1000000,"ts":0.060,"args":{"pct":99.5}})",
          R"({"ph":"s","id":1000077,"cat":"ac2g","name":"ac2g","pid":4242,"tid":4243,"ts":0.010})",
          R"({"ph":"f","id":1000077,"cat":"ac2g","name":"ac2g","pid":1000000,"tid":7,"ts":0.100,"bp":"e"})",
          R"({"ph":"f","id":1000078,"cat":"ac2g","name":"ac2g","pid":1000000,"tid":7,"ts":0.100})",
      }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  // Object events carry an id (chrome://tracing needs one).
  for (const char* line : {
           R"({"ph":"O","cat":"","name":"O","pid":4242,"tid":4243,"ts":0.004,"id":"0x1"})",
           R"({"ph":"N","cat":"","name":"N","pid":4242,"tid":4243,"ts":0.005,"id":"0x2"})",
           R"({"ph":"D","cat":"","name":"D","pid":4242,"tid":4243,"ts":0.006,"id":"0x3"})",
       }) {
    EXPECT_TRUE(has_line(text, line)) << line << "\n" << text;
  }
  // No thread metadata for the async track.
  EXPECT_EQ(text.find(R"("name":"thread_sort_index","pid":4242,"tid":1,)"), std::string::npos);
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, DevicePropertiesInfoAndExtraMembers) {
  Trace t;
  DeviceProperties d;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.num_sms = 132;
  d.compute_major = 9;
  d.total_global_mem = 150'000'000'000ull;
  d.clock_khz = 1'980'000;
  d.memory_clock_khz = 2'619'000;
  d.memory_bus_width = 6144;
  d.peak_flops = {{"fp32", 6.7e13}, {"bf16", 9.89e14}};
  d.peak_bytes_per_s = 4.8e12;
  d.peak_source = "table";
  d.raw_json = R"({"id": 0, "name": "old", "warpSize": 32, "regsPerBlock": 65536, "numSms": 1})";
  t.devices.push_back(d);
  t.info = {{"command", "python train.py --x \"y\""}, {"version", "0.0.9"}};
  t.report.dropped_records = 12;
  // distributedInfo on one line, spaced as Kineto writes it (HTA's rank pattern needs
  // the space).
  t.extra_top_level = {{"distributedInfo", "{\"rank\": 0,\n \"world_size\": 2}"},
                       {"traceEvents", "[]"},
                       {"schemaVersion", "2"},
                       {"deviceProperties", "[]"}};
  const std::string text = render(t);
  EXPECT_NE(
      text.find(
          R"("deviceProperties":[{"id":0,"name":"NVIDIA H200","totalGlobalMem":150000000000,"computeMajor":9,"computeMinor":0,"numSms":132,"clockRateKHz":1980000,"memoryClockRateKHz":2619000,"memoryBusWidth":6144,"peakFlops":{"fp32":67000000000000,"bf16":989000000000000},"peakBandwidthBytesPerSec":4800000000000,"peakSource":"table","warpSize":32,"regsPerBlock":65536}])"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"(],"flopline":{"version":"0.0.9","command":"python train.py --x \"y\"","droppedRecords":12},"distributedInfo":{"rank": 0, "world_size": 2}})"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("\"schemaVersion\":2"), std::string::npos);
  EXPECT_TRUE(python_accepts_text(text));
}

// Args as a tolerant reader stores them (newlines, invalid UTF-8, nan) come out as
// strict JSON on the event's line.
TEST(Writer, ReadArgsAreMadeStrict) {
  Small x;
  const ArgsId messy =
      x.t.args.add_json("{\n  \"a\": nan,\n  \"b\": \"\xC0 x\",\n  \"c\": [1, 2]\n}");
  Slice s = x.slice("k", "kernel", Small::kBase, 10, messy);
  s.metrics = x.b.add_metrics({10, -1});
  x.b.add_slice(x.stream, s);
  x.b.finalize();
  const std::string text = render(x.t);
  EXPECT_TRUE(has_line(
      text,
      cat(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0.000,"dur":0.010,"args":{"a":null,"b":")",
          "\xEF\xBF\xBD", R"( x","c":[1,2],"flops":10,"TFLOP/s":0.001}})")))
      << text;
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(Writer, HostileNamesGiveValidJson) {
  Small x;
  std::string huge;
  while (huge.size() < 100 * 1024) huge += "template<\"q\"\\n\n\t>";
  const std::string names[] = {"\"quoted\"",
                               "back\\slash",
                               "new\nline",
                               std::string("nul\0byte", 8),
                               huge,
                               "bad \xC0\x80 \xED\xA0\x80 \xF4\x90\x80\x80 \xFF",
                               "trunc \xE2\x82",
                               "\x01\x02\x1f"};
  TimeNs ts = Small::kBase;
  for (const std::string& n : names) {
    x.b.add_slice(x.thread,
                  x.slice(n, n, ts, 5, x.t.args.add_json(ArgsBuilder().add(n, n).finish())));
    ts += 10;
  }
  const std::uint32_t p = x.b.process(names[5]);
  x.t.processes[p].name = x.s(names[2]);
  x.b.track(p, names[4]);
  x.b.finalize();
  const std::string text = render(x.t);
  for (const std::string& e : events_of(text)) EXPECT_EQ(e.rfind("{\"ph\":\"", 0), 0u) << e;
  EXPECT_NE(text.find(R"("name":"nul\u0000byte")"), std::string::npos);
  EXPECT_NE(text.find(R"("name":"new\nline")"), std::string::npos);
  EXPECT_NE(text.find(R"("name":"\"quoted\"")"), std::string::npos);
  EXPECT_NE(text.find(R"("name":"\u0001\u0002\u001f")"), std::string::npos);
  EXPECT_TRUE(python_accepts_text(text));
}

TEST(WriterFile, PlainAndGzipMatchTheRenderAndLeaveNoTmp) {
  Small x;
  for (int i = 0; i < 1000; ++i) {
    x.b.add_slice(x.stream, x.slice("kernel " + std::to_string(i % 7), "kernel",
                                    Small::kBase + i * 1000, 900));
  }
  x.b.finalize();
  const std::string text = render(x.t);
  const fs::path dir = temp_dir();
  for (const char* name : {"plain.json", "packed.json.gz"}) {
    const fs::path path = dir / name;
    const WriteResult r = write_chrome_trace(x.t, path.string());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.error.empty());
    EXPECT_EQ(r.bytes_written, text.size());
    EXPECT_EQ(r.events_written, 1000u + 8u);  // 2 + 2 + 2 + 2 metadata events
    EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
    std::string back, error;
    ASSERT_TRUE(read_file_maybe_gzip(path.string(), back, error)) << error;
    EXPECT_EQ(back, text);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    const int b0 = std::fgetc(f), b1 = std::fgetc(f);
    std::fclose(f);
    const bool gz = std::string_view(name).ends_with(".gz");
    EXPECT_EQ(b0 == 0x1f && b1 == 0x8b, gz) << name;
    if (gz) {
      EXPECT_LT(fs::file_size(path), text.size() / 4);
    } else {
      EXPECT_TRUE(python_accepts(path));
    }
  }
}

// The file is streamed through an 8 MB window: a trace several times that size must
// come out byte for byte as the in-memory render, plain and gzipped.
TEST(WriterFile, StreamedFileLargerThanTheWindowEqualsTheRender) {
  Small x;
  const std::string long_name(150, 'k');
  for (int i = 0; i < 120000; ++i) {
    x.b.add_slice(x.stream, x.slice(long_name + std::to_string(i % 13), "kernel",
                                    Small::kBase + i * 1000, 900));
  }
  x.b.finalize();
  const std::string text = render(x.t);
  ASSERT_GT(text.size(), 3u * (8u << 20));
  const fs::path dir = temp_dir();
  for (const char* name : {"big.json", "big.json.gz"}) {
    const fs::path path = dir / name;
    const WriteResult r = write_chrome_trace(x.t, path.string());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.bytes_written, text.size());
    std::string back, error;
    ASSERT_TRUE(read_file_maybe_gzip(path.string(), back, error)) << error;
    EXPECT_TRUE(back == text) << name << ": streamed output differs from the render";
  }
}

TEST(WriterFile, MissingDirectoryIsAnErrorNamingThePath) {
  Small x;
  x.b.finalize();
  const std::string path = (temp_dir() / "no" / "such" / "dir" / "t.json").string();
  const WriteResult r = write_chrome_trace(x.t, path);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind(cat("cannot write ", path, ": "), 0), 0u) << r.error;
  EXPECT_NE(r.error.find("No such file or directory"), std::string::npos) << r.error;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(WriterFile, RewritingKeepsTheOldFileUntilTheNewOneIsComplete) {
  Small x;
  x.b.finalize();
  const fs::path path = temp_dir() / "again.json";
  ASSERT_TRUE(write_chrome_trace(x.t, path.string()).ok);
  ASSERT_TRUE(write_chrome_trace(x.t, path.string()).ok);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_TRUE(python_accepts(path));
}

}  // namespace
TEST(WriterFile, InflatingReportsProgressAndCanBeCancelled) {
  // ~10 MB that gzip cannot shrink much, so the inflate runs over several steps.
  std::string text;
  text.reserve(10u << 20);
  std::uint64_t x = 88172645463325252ull;
  while (text.size() < (10u << 20)) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    text += "0123456789abcdef"[x & 15];
  }
  const fs::path path = temp_dir() / "noise.gz";
  std::string error;
  ASSERT_TRUE(write_file_atomic(path.string(), text, true, 6, error)) << error;
  const std::uint64_t size = fs::file_size(path);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  std::string back;
  ASSERT_TRUE(read_file_maybe_gzip(path.string(), back, error,
                                   [&](std::uint64_t done, std::uint64_t total) {
                                     calls.emplace_back(done, total);
                                     return true;
                                   }))
      << error;
  EXPECT_EQ(back, text);
  ASSERT_GE(calls.size(), 2u);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, size);
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back().first, size);
  // Cancelled at the second call: no output, the reason says so.
  int n = 0;
  EXPECT_FALSE(read_file_maybe_gzip(path.string(), back, error,
                                    [&](std::uint64_t, std::uint64_t) { return ++n < 2; }));
  EXPECT_EQ(error, "cancelled");
  EXPECT_EQ(n, 2);
}

TEST(WriterFile, RefusesATraceWhoseArgsStayedInTheSourceFile) {
  const std::string json =
      R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":2,"ts":1,"dur":2,)"
      R"("args":{"grid":[1,1,1]}}]})";
  ReadOptions lazy;
  lazy.args = ArgsMode::kOnDemand;
  const ReadResult r = read_chrome_trace_text(json, "lazy.json", lazy);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.trace.args.location_count(), 1u);
  const fs::path path = temp_dir() / "lazy_out.json";
  const WriteResult w = write_chrome_trace(r.trace, path.string());
  EXPECT_FALSE(w.ok);
  EXPECT_NE(w.error.find("kOnDemand"), std::string::npos) << w.error;
  EXPECT_FALSE(fs::exists(path));
  // Read with the args kept, the same trace writes, args and all.
  const ReadResult kept = read_chrome_trace_text(json, "kept.json", ReadOptions{});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.trace.args.location_count(), 0u);
  ASSERT_TRUE(write_chrome_trace(kept.trace, path.string()).ok);
  std::string back, error;
  ASSERT_TRUE(read_file_maybe_gzip(path.string(), back, error)) << error;
  EXPECT_NE(back.find("\"grid\""), std::string::npos);
}

}  // namespace flopline::trace
