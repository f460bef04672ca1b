// Writer -> reader round trip: a trace with every kind of object and hostile strings
// is rendered, read back, and compared field by field, times to the nanosecond.
// Invalid UTF-8 compares against its U+FFFD-repaired form; the derived metrics keys
// the writer adds to args ("TFLOP/s", "GB/s") and the "flops"/"bytes" it moves there
// come back as SliceMetrics, so args text compares exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "flopline/trace/args.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/json_value.h"

#include "corpus_dir.h"

namespace flopline::trace {
namespace {

using namespace std::string_literals;

const std::string kFffd = "\xEF\xBF\xBD";

template <class... T>
std::string cat(const T&... parts) {  // appends: see test_json_text.cc on -Wrestrict
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

std::string huge_name() {
  std::string s;
  for (int i = 0; s.size() < 100 * 1024; ++i)
    s += cat("void k<", std::to_string(i), ", \"x\\y\">\n");
  return s;
}

// Strings as written (left) and as they must read back (right). Every other string
// reads back unchanged.
const std::vector<std::pair<std::string, std::string>>& hostile() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"quote \" backslash \\ slash /", "quote \" backslash \\ slash /"},
      {"new\nline\ttab\r\b\f", "new\nline\ttab\r\b\f"},
      {"nul\0inside"s, "nul\0inside"s},
      {"\x01\x1f control", "\x01\x1f control"},
      {huge_name(), huge_name()},
      {"caf\xC3\xA9 \xF0\x9F\x98\x80 ok", "caf\xC3\xA9 \xF0\x9F\x98\x80 ok"},
      {"overlong \xC0\x80 end", cat("overlong ", kFffd, kFffd, " end")},
      {"truncated \xE2\x82", cat("truncated ", kFffd)},
      {"surrogate \xED\xA0\x80!", cat("surrogate ", kFffd, kFffd, kFffd, "!")},
      {"too big \xF4\x90\x80\x80?", cat("too big ", kFffd, kFffd, kFffd, kFffd, "?")},
      {"lone \x80 continuation", cat("lone ", kFffd, " continuation")},
  };
  return list;
}

std::string expected(std::string_view written) {
  for (const auto& [in, out] : hostile()) {
    if (in == written) return out;
  }
  return std::string(written);
}

constexpr TimeNs kT0 = -2'000'000'000;  // negative absolute times, on purpose
constexpr TimeNs kT1 = 1'700'000'000'000'000'000;

struct Original {
  Trace t;
  TraceBuilder b{t};
  std::uint32_t cpu, gpu, labelled;
  std::uint32_t main_thread, worker, proc_track, stream7, stream13, async, label_thread;

  StringId s(std::string_view text) { return t.strings.intern(text); }
  ArgsId args(ArgsBuilder& a) { return t.args.add_json(a.finish()); }
  void slice(std::uint32_t track, TimeNs start, TimeNs dur, std::string_view name,
             std::string_view category, ArgsId a = kNoArgs, SliceMetrics m = {}) {
    Slice sl{start, dur, s(name), s(category), a, kNone};
    if (m.has_flops() || m.has_bytes()) sl.metrics = b.add_metrics(m);
    b.add_slice(track, sl);
  }
  void instant(std::uint32_t track, TimeNs ts, std::string_view name, char phase,
               InstantScope scope, ArgsId a = kNoArgs) {
    b.add_instant(track, Instant{ts, s(name), s("marks"), a, scope, phase});
  }

  Original() {
    cpu = b.process(4242);
    t.processes[cpu].name = s("python \"train\".py");
    t.processes[cpu].labels = s("rank 0");
    t.processes[cpu].sort_index = 3;
    gpu = b.process(0);
    t.processes[gpu].labels = s("GPU 0");
    t.processes[gpu].sort_index = -1;
    labelled = b.process("worker \"A\"");
    t.processes[labelled].name = s(hostile()[6].first);

    main_thread = b.track(cpu, 4242);
    t.tracks[main_thread].name = s("MainThread\n");
    worker = b.track(cpu, -17);  // negative tids exist (Kineto on some platforms)
    t.tracks[worker].sort_index = 99;
    proc_track = b.track(cpu, std::int64_t{0});  // process- and global-scoped marks
    stream7 = b.track(gpu, 7, TrackKind::kGpuStream);
    stream13 = b.track(gpu, 13, TrackKind::kGpuStream);
    t.tracks[stream13].name = s("copy stream");
    t.processes[gpu].is_gpu = true;
    t.processes[gpu].device = 0;
    async = b.track(cpu, 1, TrackKind::kAsync);
    label_thread = b.track(labelled, "thread-x\n");

    ArgsBuilder a;
    // Nested slices on the main thread, starting before zero.
    slice(main_thread, kT0, 10'000, "outer", "cpu_op",
          args(a.add("Input Dims", std::string_view("[[1, 2]]")).add("seq", 7)));
    a.clear();
    slice(main_thread, kT0 + 100, 3'000, "inner", "cpu_op");
    slice(main_thread, kT0 + 5'000, 4'001, "inner2", "cpu_op");
    slice(main_thread, kT0 + 6'000, 999, "innermost", "cpu_op", kNoArgs, {2e6, -1});
    slice(main_thread, kT0 + 9'999, 1, "last ns", "cpu_op");
    // Overlapping slices that do not nest go to extra rows.
    slice(worker, kT0 + 20'000, 1'000, "overlap a", "user_annotation");
    slice(worker, kT0 + 20'500, 1'000, "overlap b", "user_annotation");
    slice(worker, kT0 + 20'700, 0, "zero", "user_annotation");
    // Launches, then kernels far later on the GPU.
    slice(main_thread, kT1, 5'000, "cudaLaunchKernel", "cuda_runtime",
          args(a.add("cbid", 211).add("correlation", 100)));
    a.clear();
    slice(main_thread, kT1 + 10'000, 4'000, "cudaMemcpyAsync", "cuda_runtime",
          args(a.add("cbid", 51).add("correlation", 101)));
    a.clear();
    slice(stream7, kT1 + 20'000, 123'457, "ampere_sgemm_128x64_nn", "kernel",
          args(a.add("device", 0)
                   .add("stream", 7)
                   .add("correlation", 100)
                   .add_ints("grid", {128, 1, 1})
                   .add_ints("block", {256, 1, 1})
                   .add("registers per thread", 64)
                   .add("shared memory", 16384)),
          {1.5e12, 3e9});
    a.clear();
    slice(stream7, kT1 + 150'000, 1'001, "bytes only", "kernel", kNoArgs, {-1, 4096});
    slice(stream7, kT1 + 160'000, 0, "zero-length kernel", "kernel", kNoArgs, {1e3, 2e3});
    slice(stream13, kT1 + 30'000, 10'000, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy",
          args(a.add("device", 0)
                   .add("stream", 13)
                   .add("correlation", 101)
                   .add("memory bandwidth (GB/s)", 12.5)));
    a.clear();
    // Hostile names (and a hostile category) on a thread of their own.
    TimeNs ts = kT1 + 1'000'000;
    for (const auto& [name, unused] : hostile()) {
      slice(label_thread, ts, 10, name, "cat \"q\"", args(a.add(name, name).add("n", 1)));
      a.clear();
      ts += 100;
    }
    // Async spans overlap freely.
    slice(async, kT1 + 2'000, 50'000, "request 1", "async_req",
          args(a.add("id", std::string_view("r1"))));
    a.clear();
    slice(async, kT1 + 3'000, 10'000, "request 2", "async_req");
    slice(async, kT1 + 4'000, 70'000, "request 3", "async_req", kNoArgs, {5e9, -1});
    // Instants of every phase.
    instant(main_thread, kT1 + 1'000, "thread mark", 'i', InstantScope::kThread,
            args(a.add("step", 3)));
    a.clear();
    instant(main_thread, kT1 + 1'001, "R mark", 'R', InstantScope::kThread);
    instant(main_thread, kT1 + 1'002, "sample", 'P', InstantScope::kThread);
    instant(proc_track, kT1 + 1'003, "process mark", 'i', InstantScope::kProcess);
    instant(proc_track, kT1 + 1'004, "global mark", 'I', InstantScope::kGlobal);
    instant(proc_track, kT1 + 1'005, "object new", 'N', InstantScope::kProcess);
    instant(proc_track, kT1 + 1'006, "object snapshot", 'O', InstantScope::kProcess,
            args(a.add("snapshot", std::string_view("{}"))));
    a.clear();
    instant(proc_track, kT1 + 1'007, "object delete", 'D', InstantScope::kProcess);
    instant(label_thread, kT1 + 1'008, hostile()[3].first, 'i', InstantScope::kThread);
    // Counters, with values that need care.
    const std::uint32_t mem = b.counter_series(cpu, s("memory"), s("allocated"), s("mem"));
    for (auto [when, v] : std::vector<std::pair<TimeNs, double>>{
             {kT0, 0.0}, {kT0 + 1, 1.5}, {kT1, 1e20}, {kT1 + 1, -3.25}, {kT1 + 2, 0.1}}) {
      b.add_counter_point(mem, when, v);
    }
    const std::uint32_t q = b.counter_series(gpu, s("queue[3]"), s("depth"), 0);
    b.add_counter_point(q, kT1 + 25'000, 4);
    // Flows: Kineto's launch -> kernel (binds the enclosing slice) and a v1 flow
    // without "bp" (binds the next slice).
    Flow f;
    f.id = 100;
    f.name = s("ac2g");
    f.cat = s("ac2g");
    f.from = {main_thread, kT1 + 2'000, true, {}};
    f.to = {stream7, kT1 + 20'000, true, {}};
    b.add_flow(f);
    f.id = 101;
    f.from = {main_thread, kT1 + 11'000, true, {}};
    f.to = {stream13, kT1 + 29'000, false, {}};
    b.add_flow(f);
    b.finalize();

    DeviceProperties d;
    d.id = 0;
    d.name = "NVIDIA H200";
    d.num_sms = 132;
    d.compute_major = 9;
    d.compute_minor = 0;
    d.total_global_mem = 150'106'652'672ull;
    d.clock_khz = 1'980'000;
    d.memory_clock_khz = 2'619'000;
    d.memory_bus_width = 6144;
    d.peak_flops = {{"fp32", 6.69e13}, {"tf32", 4.94e14}, {"bf16", 9.89e14}};
    d.peak_bytes_per_s = 4.8e12;
    d.peak_source = "table";
    d.raw_json = R"({"id":0,"warpSize":32,"maxThreadsPerBlock":1024})";
    t.devices.push_back(d);
    t.info = {{"command", "python \"train\".py --steps 3"}, {"host", "h200-01"}};
    t.report.dropped_records = 5;
    t.extra_top_level = {{"distributedInfo", R"({"backend":"nccl","rank":0,"world_size":8})"}};
  }
};

// Key of a thread/stream track that survives the trip: process and tid or tid text.
struct TrackKey {
  std::string process;  // pid number or label text
  std::string tid;
  bool operator<(const TrackKey& o) const {
    return std::tie(process, tid) < std::tie(o.process, o.tid);
  }
};

std::string process_key(const Trace& t, std::uint32_t p) {
  const Process& proc = t.processes[p];
  return proc.pid_label ? cat("label:", expected(t.str(proc.pid_label))) : std::to_string(proc.pid);
}

TrackKey track_key(const Trace& t, std::uint32_t i) {
  const Track& tr = t.tracks[i];
  return {process_key(t, tr.process),
          tr.tid_label ? cat("label:", expected(t.str(tr.tid_label))) : std::to_string(tr.tid)};
}

// Async tracks are matched per process; the test puts one category on each.
std::map<TrackKey, std::uint32_t> index_tracks(const Trace& t) {
  std::map<TrackKey, std::uint32_t> m;
  for (std::uint32_t i = 0; i < t.tracks.size(); ++i) {
    TrackKey k = track_key(t, i);
    if (t.tracks[i].kind == TrackKind::kAsync) k.tid = "async";
    EXPECT_TRUE(m.emplace(k, i).second) << k.process << " " << k.tid;
  }
  return m;
}

std::string args_of(const Trace& t, ArgsId id) {
  return id == kNoArgs ? std::string("<none>") : std::string(t.args.json(id));
}

void expect_same_slice(const Trace& a, const Slice& x, const Trace& b, const Slice& y,
                       const std::string& where) {
  EXPECT_EQ(x.start, y.start) << where;
  EXPECT_EQ(x.dur, y.dur) << where;
  EXPECT_EQ(expected(a.str(x.name)), b.str(y.name)) << where;
  EXPECT_EQ(expected(a.str(x.cat)), b.str(y.cat)) << where;
  EXPECT_EQ(args_of(a, x.args), args_of(b, y.args)) << where;
  const SliceMetrics mx = a.metrics_of(x), my = b.metrics_of(y);
  EXPECT_EQ(mx.has_flops(), my.has_flops()) << where;
  EXPECT_EQ(mx.has_bytes(), my.has_bytes()) << where;
  if (mx.has_flops()) {
    EXPECT_EQ(mx.flops, my.flops) << where;
  }
  if (mx.has_bytes()) {
    EXPECT_EQ(mx.bytes, my.bytes) << where;
  }
}

class RoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    render_chrome_trace(a_.t, text_);
    ReadResult r = read_chrome_trace_text(text_, "round_trip.json");
    ASSERT_TRUE(r.ok()) << r.error->message();
    b_ = std::move(r.trace);
    a_tracks_ = index_tracks(a_.t);
    b_tracks_ = index_tracks(b_);
  }
  std::uint32_t b_track(std::uint32_t a_index) {
    TrackKey k = track_key(a_.t, a_index);
    if (a_.t.tracks[a_index].kind == TrackKind::kAsync) k.tid = "async";
    auto it = b_tracks_.find(k);
    EXPECT_NE(it, b_tracks_.end()) << k.process << " " << k.tid;
    return it == b_tracks_.end() ? kNone : it->second;
  }
  Original a_;
  std::string text_;
  Trace b_;
  std::map<TrackKey, std::uint32_t> a_tracks_, b_tracks_;
};

TEST_F(RoundTrip, NothingSkippedAndTheBaseIsTheEarliestTime) {
  EXPECT_EQ(b_.report.events_skipped, 0u);
  EXPECT_TRUE(b_.report.skip_reasons.empty());
  EXPECT_TRUE(b_.report.warnings.empty()) << b_.report.warnings.front();
  EXPECT_EQ(b_.base_time_ns, kT0);
  EXPECT_EQ(b_.report.dropped_records, 5u);
  EXPECT_EQ(b_.slice_count(), a_.t.slice_count());
  EXPECT_EQ(b_.instant_count(), a_.t.instant_count());
  EXPECT_EQ(b_.counter_point_count(), a_.t.counter_point_count());
  EXPECT_EQ(b_.flows.size(), a_.t.flows.size());
}

TEST_F(RoundTrip, Processes) {
  ASSERT_EQ(b_.processes.size(), a_.t.processes.size());
  std::map<std::string, std::uint32_t> by_key;
  for (std::uint32_t i = 0; i < b_.processes.size(); ++i) by_key[process_key(b_, i)] = i;
  for (std::uint32_t i = 0; i < a_.t.processes.size(); ++i) {
    const Process& x = a_.t.processes[i];
    ASSERT_EQ(by_key.count(process_key(a_.t, i)), 1u) << process_key(a_.t, i);
    const Process& y = b_.processes[by_key[process_key(a_.t, i)]];
    const std::string where = process_key(a_.t, i);
    if (!x.pid_label) {
      EXPECT_EQ(x.pid, y.pid) << where;
    }
    EXPECT_EQ(expected(a_.t.str(x.name)), b_.str(y.name)) << where;
    EXPECT_EQ(expected(a_.t.str(x.labels)), b_.str(y.labels)) << where;
    EXPECT_EQ(x.sort_index, y.sort_index) << where;
    EXPECT_EQ(x.is_gpu, y.is_gpu) << where;
    EXPECT_EQ(x.device, y.device) << where;
  }
}

TEST_F(RoundTrip, TracksAndTheirSlicesRowByRow) {
  ASSERT_EQ(b_.tracks.size(), a_.t.tracks.size());
  for (std::uint32_t i = 0; i < a_.t.tracks.size(); ++i) {
    const Track& x = a_.t.tracks[i];
    const std::uint32_t j = b_track(i);
    if (j == kNone) continue;
    const Track& y = b_.tracks[j];
    const std::string where = cat(track_key(a_.t, i).process, "/", track_key(a_.t, i).tid);
    EXPECT_EQ(x.kind, y.kind) << where;
    if (x.kind != TrackKind::kAsync) {  // an async track is named after its category
      const std::string name = x.name == 0 && x.kind == TrackKind::kGpuStream
                                   ? cat("stream ", std::to_string(x.tid))
                                   : expected(a_.t.str(x.name));
      EXPECT_EQ(name, b_.str(y.name)) << where;
      EXPECT_EQ(x.sort_index, y.sort_index) << where;
    }
    EXPECT_EQ(x.nesting_rows, y.nesting_rows) << where;
    ASSERT_EQ(x.rows.size(), y.rows.size()) << where;
    for (std::size_t r = 0; r < x.rows.size(); ++r) {
      ASSERT_EQ(x.rows[r].size(), y.rows[r].size()) << where << " row " << r;
      for (std::size_t k = 0; k < x.rows[r].size(); ++k) {
        expect_same_slice(a_.t, x.rows[r][k], b_, y.rows[r][k],
                          cat(where, " row ", std::to_string(r), " #", std::to_string(k)));
      }
    }
    ASSERT_EQ(x.instants.size(), y.instants.size()) << where;
    for (std::size_t k = 0; k < x.instants.size(); ++k) {
      const Instant& p = x.instants[k];
      const Instant& q = y.instants[k];
      const std::string at = cat(where, " instant ", std::to_string(k));
      EXPECT_EQ(p.ts, q.ts) << at;
      EXPECT_EQ(p.phase, q.phase) << at;
      EXPECT_EQ(p.scope, q.scope) << at;
      EXPECT_EQ(expected(a_.t.str(p.name)), b_.str(q.name)) << at;
      EXPECT_EQ(a_.t.str(p.cat), b_.str(q.cat)) << at;
      EXPECT_EQ(args_of(a_.t, p.args), args_of(b_, q.args)) << at;
    }
  }
}

TEST_F(RoundTrip, HostileStringsComeBackRepaired) {
  const Track& y = b_.tracks[b_track(a_.label_thread)];
  ASSERT_EQ(y.rows.size(), 1u);
  ASSERT_EQ(y.rows[0].size(), hostile().size());
  for (std::size_t k = 0; k < hostile().size(); ++k) {
    EXPECT_EQ(b_.str(y.rows[0][k].name), hostile()[k].second) << k;
    // The args member named after the string, with the string as its value.
    const std::string_view args = b_.args.json(y.rows[0][k].args);
    const auto members = json_members(args);
    ASSERT_EQ(members.size(), 2u) << k;
    EXPECT_EQ(members[0].first, hostile()[k].second) << k;
    EXPECT_EQ(json_string(members[0].second), hostile()[k].second) << k;
  }
}

TEST_F(RoundTrip, Counters) {
  ASSERT_EQ(b_.counters.size(), a_.t.counters.size());
  for (const CounterSeries& x : a_.t.counters) {
    const CounterSeries* y = nullptr;
    for (const CounterSeries& c : b_.counters) {
      if (b_.str(c.name) == a_.t.str(x.name) && b_.str(c.key) == a_.t.str(x.key)) y = &c;
    }
    ASSERT_NE(y, nullptr) << a_.t.str(x.name);
    EXPECT_EQ(process_key(a_.t, x.process), process_key(b_, y->process));
    EXPECT_EQ(a_.t.str(x.cat), b_.str(y->cat));
    ASSERT_EQ(x.points.size(), y->points.size());
    for (std::size_t k = 0; k < x.points.size(); ++k) {
      EXPECT_EQ(x.points[k].ts, y->points[k].ts) << k;
      EXPECT_EQ(x.points[k].value, y->points[k].value) << k;
    }
  }
}

TEST_F(RoundTrip, FlowsJoinTheSameSlices) {
  ASSERT_EQ(b_.flows.size(), a_.t.flows.size());
  for (const Flow& x : a_.t.flows) {
    const Flow* y = nullptr;
    for (const Flow& f : b_.flows) {
      if (f.id == x.id) y = &f;
    }
    ASSERT_NE(y, nullptr) << x.id;
    EXPECT_EQ(a_.t.str(x.name), b_.str(y->name));
    EXPECT_EQ(a_.t.str(x.cat), b_.str(y->cat));
    EXPECT_EQ(b_track(x.from.track), y->from.track);
    EXPECT_EQ(b_track(x.to.track), y->to.track);
    EXPECT_EQ(x.from.ts, y->from.ts);
    EXPECT_EQ(x.to.ts, y->to.ts);
    EXPECT_EQ(x.from.enclosing, y->from.enclosing);
    EXPECT_EQ(x.to.enclosing, y->to.enclosing);
    ASSERT_TRUE(x.joined());
    ASSERT_TRUE(y->joined()) << x.id;
    expect_same_slice(a_.t, a_.t.tracks[x.from.track].at(x.from.slice), b_,
                      b_.tracks[y->from.track].at(y->from.slice), "from");
    expect_same_slice(a_.t, a_.t.tracks[x.to.track].at(x.to.slice), b_,
                      b_.tracks[y->to.track].at(y->to.slice), "to");
  }
}

TEST_F(RoundTrip, DevicesInfoAndOtherTopLevelMembers) {
  ASSERT_EQ(b_.devices.size(), 1u);
  const DeviceProperties& x = a_.t.devices[0];
  const DeviceProperties& y = b_.devices[0];
  EXPECT_EQ(x.id, y.id);
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.num_sms, y.num_sms);
  EXPECT_EQ(x.compute_major, y.compute_major);
  EXPECT_EQ(x.compute_minor, y.compute_minor);
  EXPECT_EQ(x.total_global_mem, y.total_global_mem);
  EXPECT_EQ(x.clock_khz, y.clock_khz);
  EXPECT_EQ(x.memory_clock_khz, y.memory_clock_khz);
  EXPECT_EQ(x.memory_bus_width, y.memory_bus_width);
  EXPECT_EQ(x.peak_flops, y.peak_flops);
  EXPECT_EQ(x.peak_bytes_per_s, y.peak_bytes_per_s);
  EXPECT_EQ(x.peak_source, y.peak_source);
  // Keys the model does not hold travel in raw_json.
  EXPECT_EQ(json_member(y.raw_json, "warpSize"), std::optional<std::string_view>("32"));
  EXPECT_EQ(json_member(y.raw_json, "maxThreadsPerBlock"), std::optional<std::string_view>("1024"));

  std::vector<std::pair<std::string, std::string>> want = {{"version", ""}};
  want.insert(want.end(), a_.t.info.begin(), a_.t.info.end());
  ASSERT_EQ(b_.info.size(), want.size());
  EXPECT_EQ(b_.info[0].first, "version");
  EXPECT_FALSE(b_.info[0].second.empty());
  for (std::size_t k = 1; k < want.size(); ++k) EXPECT_EQ(b_.info[k], want[k]);

  bool found = false;
  for (const auto& [key, value] : b_.extra_top_level) {
    if (key == "distributedInfo") {
      found = true;
      // The same members; written spaced as Kineto does (HTA's rank pattern needs it).
      std::string compact = value;
      std::erase(compact, ' ');
      EXPECT_EQ(compact, a_.t.extra_top_level[0].second);
      EXPECT_NE(value.find("\"rank\": 0"), std::string::npos) << value;
    }
  }
  EXPECT_TRUE(found);
}

// Reading and writing again gives the same text: nothing drifts on a second trip.
TEST_F(RoundTrip, SecondTripIsIdentical) {
  std::string again;
  render_chrome_trace(b_, again);
  ReadResult r = read_chrome_trace_text(again, "second.json");
  ASSERT_TRUE(r.ok()) << r.error->message();
  std::string third;
  render_chrome_trace(r.trace, third);
  EXPECT_EQ(again, third);
}

// Real traces of other tools: what the reader kept, written and read again, gives
// the same model counts; the text is strict JSON (Python's parser accepts it); and
// from the second write on the text no longer changes (the first read orders tracks
// as the other tool wrote them, later reads as flopline does).
TEST(CorpusRoundTrip, EveryFileSurvivesWriteAndRead) {
  FLOPLINE_SKIP_WITHOUT_CORPUS();
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() /
      cat("flopline_round_trip_", std::to_string(static_cast<long>(::getpid())), ".json");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FLOPLINE_CORPUS_DIR)) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".json") && !path.ends_with(".json.gz")) continue;
    ++files;
    SCOPED_TRACE(path);
    const ReadResult first = read_chrome_trace_file(path);
    if (!first.ok()) continue;  // files that are not traces are the reader tests' business
    const WriteResult w = write_chrome_trace(first.trace, scratch.string());
    ASSERT_TRUE(w.ok) << w.error;
    const std::string check =
        cat("python3 -c \"import json,sys\n"
            "def bad(c): raise ValueError(c)\n"
            "json.load(open(sys.argv[1], encoding='utf-8'), parse_constant=bad)\" '",
            scratch.string(), "'");
    EXPECT_EQ(std::system(check.c_str()), 0);
    const ReadResult second = read_chrome_trace_file(scratch.string());
    ASSERT_TRUE(second.ok()) << second.error->message();
    EXPECT_EQ(second.trace.report.events_skipped, 0u);
    EXPECT_EQ(second.trace.slice_count(), first.trace.slice_count());
    EXPECT_EQ(second.trace.instant_count(), first.trace.instant_count());
    EXPECT_EQ(second.trace.counter_point_count(), first.trace.counter_point_count());
    EXPECT_EQ(second.trace.flows.size(), first.trace.flows.size());
    EXPECT_EQ(second.trace.processes.size(), first.trace.processes.size());
    // An async track with nothing on it has nothing to write.
    auto tracks_with_content = [](const Trace& t) {
      return std::count_if(t.tracks.begin(), t.tracks.end(), [](const Track& k) {
        return k.kind != TrackKind::kAsync || k.slice_count() > 0 || !k.instants.empty();
      });
    };
    EXPECT_EQ(tracks_with_content(second.trace), tracks_with_content(first.trace));
    std::string text2, text3;
    render_chrome_trace(second.trace, text2);
    const ReadResult third = read_chrome_trace_text(text2, "third.json");
    ASSERT_TRUE(third.ok()) << third.error->message();
    render_chrome_trace(third.trace, text3);
    EXPECT_TRUE(text2 == text3) << "the third write differs from the second";
  }
  std::filesystem::remove(scratch);
  EXPECT_GE(files, 20);
}

}  // namespace
}  // namespace flopline::trace
