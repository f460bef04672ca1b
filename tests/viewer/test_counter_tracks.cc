// Counter tracks in the layout and the state dump, on a trace written the way
// `flopline run --gpu-metrics` writes one (profiler/src/capture/counter_records.cc and
// the Chrome writer): "C" events named "GPU metrics", cat "gpu_metrics", one args
// member per series, on the GPU device's pid.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "core/load_job.h"
#include "core/state_dump.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

constexpr int kSamples = 50;  // one every 20 us from t = 0
constexpr const char* kSeries[] = {"SM active %", "tensor pipe active %", "DRAM read GB/s",
                                   "DRAM write GB/s"};

// Sample i of series s: SM active rises 0..98 and is 100 from sample 25 on; the others
// are multiples of i, so every maximum is known.
double sample(int s, int i) {
  if (s == 0) return i < 25 ? 2.0 * i : 100.0;
  return (s + 1) * 10.0 * i;
}

std::string meta(const char* what, int pid, int tid, const std::string& arg) {
  return "{\"ph\":\"M\",\"name\":\"" + std::string(what) + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":" + arg + "}";
}

std::string gpu_metrics_json() {
  std::vector<std::string> ev = {
      meta("process_name", 1636, 0, "{\"name\":\"python3\"}"),
      meta("process_sort_index", 1636, 0, "{\"sort_index\":1636}"),
      meta("process_name", 0, 0, "{\"name\":\"GPU 0: NVIDIA H200\"}"),
      meta("process_labels", 0, 0, "{\"labels\":\"GPU 0\"}"),
      meta("process_sort_index", 0, 0, "{\"sort_index\":5000000}"),
      meta("thread_name", 0, 7, "{\"name\":\"stream 7\"}"),
      x_event("cudaLaunchKernel", "cuda_runtime", 1636, 1636, "1.000", "4.000"),
      x_event("gemm", "kernel", 0, 7, "10.000", "500.000", "{\"stream\":7}"),
  };
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < kSamples; ++i) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "{\"ph\":\"C\",\"name\":\"GPU metrics\",\"cat\":\"gpu_metrics\",\"pid\":0,"
                    "\"ts\":%d.000,\"args\":{\"%s\":%g}}",
                    i * 20, kSeries[s], sample(s, i));
      ev.emplace_back(buf);
    }
  }
  // A process with counters only (another tool's memory counter).
  ev.push_back(meta("process_name", 9, 0, "{\"name\":\"allocator\"}"));
  ev.push_back(
      "{\"ph\":\"C\",\"name\":\"Memory\",\"pid\":9,\"ts\":5,\"args\":{\"Total Allocated MB\":12}}");
  return trace_json(ev);
}

std::uint32_t process_named(const TimelineLayout& L, std::string_view prefix) {
  for (std::uint32_t i = 0; i < L.processes().size(); ++i) {
    if (L.processes()[i].name.rfind(prefix, 0) == 0) return i;
  }
  return trace::kNone;
}

// The trace, read, and its layout.
class CounterTracks : public ::testing::Test {
 protected:
  const trace::Trace t = read_json(gpu_metrics_json());
  const std::vector<const trace::Trace*> list{&t};
  TimelineLayout L = TimelineLayout::build(list);
};

TEST_F(CounterTracks, GpuMetricsSitUnderTheirGpuFirst) {
  const std::uint32_t gpu = process_named(L, "GPU 0: NVIDIA H200");
  ASSERT_NE(gpu, trace::kNone);
  const LayoutProcess& p = L.processes()[gpu];
  EXPECT_FALSE(p.collapsed);
  ASSERT_EQ(p.track_count, 5u);  // four series, then stream 7
  for (std::uint32_t k = 0; k < 4; ++k) {
    const LayoutTrack& lt = L.tracks()[p.first_track + k];
    ASSERT_TRUE(lt.is_counter());
    EXPECT_EQ(lt.name, "GPU metrics: " + std::string(kSeries[k]));
    EXPECT_EQ(lt.point_count, static_cast<std::uint64_t>(kSamples));
    EXPECT_EQ(lt.row_count, 0u);
    EXPECT_FALSE(lt.collapsed);
    EXPECT_EQ(lt.graph_height, L.params().counter_px);
    EXPECT_EQ(lt.graph_y, lt.y + L.params().track_header_px);
    EXPECT_EQ(t.str(t.counters[lt.counter].key), kSeries[k]);
    EXPECT_EQ(L.counter_track_at_y(lt.graph_y + 1), p.first_track + k);
    EXPECT_EQ(L.counter_track_at_y(lt.y + 1), trace::kNone);  // its header, not its graph
  }
  const LayoutTrack& stream = L.tracks()[p.first_track + 4];
  EXPECT_FALSE(stream.is_counter());
  EXPECT_EQ(stream.name, "stream 7");
  const LayoutTrack& last_counter = L.tracks()[p.first_track + 3];
  EXPECT_GE(L.rows()[stream.first_row].y, last_counter.graph_y + last_counter.graph_height);
  EXPECT_EQ(L.counter_tracks().size(), 5u);  // and the allocator's
  EXPECT_EQ(L.slice_count(), t.slice_count());
}

TEST_F(CounterTracks, AProcessWithOnlyCountersIsLaidOut) {
  const std::uint32_t alloc = process_named(L, "allocator");
  ASSERT_NE(alloc, trace::kNone);
  ASSERT_EQ(L.processes()[alloc].track_count, 1u);
  const LayoutTrack& lt = L.tracks()[L.processes()[alloc].first_track];
  EXPECT_EQ(lt.name, "Memory: Total Allocated MB");
  EXPECT_GT(lt.graph_height, 0);
}

TEST_F(CounterTracks, CollapsingHidesTheGraph) {
  const std::uint32_t gpu = process_named(L, "GPU 0");
  const std::uint32_t k = L.processes()[gpu].first_track;
  const float height = L.total_height();
  L.toggle_track(k);
  EXPECT_EQ(L.tracks()[k].graph_height, 0);
  EXPECT_TRUE(L.tracks()[k].visible);  // the header stays
  EXPECT_FLOAT_EQ(L.total_height(), height - L.params().counter_px);
  EXPECT_EQ(L.counter_track_at_y(L.tracks()[k].graph_y + 1), trace::kNone);
  L.toggle_track(k);
  L.toggle_process(gpu);
  for (std::uint32_t j = k; j < k + 4; ++j) EXPECT_EQ(L.tracks()[j].graph_height, 0);
}

TEST_F(CounterTracks, StateDumpGivesEachTracksVisibleRange) {
  const auto [begin, end] = t.time_bounds();
  Viewport vp;
  vp.set_extent(begin, end);
  // Samples 0..9 (0 .. 180 us): sample 9's step is the last one starting in view.
  vp.t0_ns = begin;
  vp.t1_ns = begin + 190'000;
  vp.width_px = 1000;
  const std::string text = dump_state_json(
      list, ViewerStateView{.viewport = &vp, .layout = &L, .counter_items = 7, .end_ns = end});
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["counter_items"], 7);
  const nlohmann::json& tracks = doc["counter_tracks"];
  ASSERT_EQ(tracks.size(), 5u);
  // In layout order: the allocator (pid 9) sorts before the GPU (sort index 5000000).
  EXPECT_EQ(tracks[0]["name"], "allocator (pid 9)/Memory: Total Allocated MB");
  EXPECT_EQ(tracks[0]["unit"], "MB");
  EXPECT_EQ(tracks[0]["visible_max"].get<double>(), 12.0);
  for (int s = 0; s < 4; ++s) {
    const nlohmann::json& c = tracks[static_cast<std::size_t>(s) + 1];
    EXPECT_EQ(c["name"],
              "GPU 0: NVIDIA H200 [GPU 0] (pid 0)/GPU metrics: " + std::string(kSeries[s]));
    EXPECT_EQ(c["unit"], s < 2 ? "%" : "GB/s");
    EXPECT_EQ(c["points"], kSamples);
    EXPECT_EQ(c["shown"], true);
    EXPECT_EQ(c["visible_points"], 10);
    EXPECT_EQ(c["visible_max"].get<double>(), sample(s, 9));
    EXPECT_EQ(c["visible_min"].get<double>(), sample(s, 0));
  }
  // The whole trace: SM active reaches 100.
  vp.t1_ns = end;
  const nlohmann::json all = nlohmann::json::parse(
      dump_state_json(list, ViewerStateView{.viewport = &vp, .layout = &L, .end_ns = end}));
  EXPECT_EQ(all["counter_tracks"][1]["visible_max"].get<double>(), 100.0);
  EXPECT_EQ(all["counter_tracks"][1]["visible_points"], kSamples);
}

TEST(CounterTrackLoading, IndexesEverySeries) {
  const std::string path = ::testing::TempDir() + "/gpu_metrics_trace.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string json = gpu_metrics_json();
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
  const LoadResult r = load_files({path});
  ASSERT_EQ(r.files.size(), 1u);
  const LoadedFile& f = *r.files[0];
  ASSERT_EQ(f.counter_index.size(), f.trace.counters.size());
  for (std::size_t c = 0; c < f.trace.counters.size(); ++c) {
    const auto& pts = f.trace.counters[c].points;
    double want = pts.front().value;
    for (const auto& p : pts) want = std::max(want, p.value);
    EXPECT_EQ(f.counter_index[c].range(0, pts.size()).max, want);
  }
  EXPECT_EQ(r.layout.counter_tracks().size(), 5u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace flopline::viewer
