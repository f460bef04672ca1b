// A decoded capture survives the Chrome-trace writer and reader: every slice, flow,
// process and thread name, sort index, metric and device peak comes back.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"

namespace flopline::capture {
namespace {

using trace::Trace;

RecordBatch capture() {
  RecordBatch b;
  b.process_id = 31337;
  b.process_name = "python3";
  DeviceInfo d;
  d.ordinal = 0;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.compute_major = 9;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bus_width = 6016;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  d.reserved_shared_memory_per_block = 1024;
  b.devices.push_back(d);
  b.thread_names.push_back({31337, "python3"});

  const TimeNs t0 = 1700000000123456789;  // wall-clock nanoseconds, as CUPTI gives them
  auto marker = [&](std::uint32_t id, std::uint32_t flags, TimeNs ts, std::string name) {
    MarkerRecord m;
    m.id = id;
    m.flags = flags;
    m.timestamp = t0 + ts;
    m.name = std::move(name);
    m.object.kind = ObjectKind::kThread;
    m.object.thread_id = 31337;
    b.markers.push_back(m);
  };
  auto call = [&](std::string name, ApiDomain domain, TimeNs start, TimeNs end,
                  std::uint32_t corr) {
    ApiRecord a;
    a.name = std::move(name);
    a.domain = domain;
    a.start = t0 + start;
    a.end = t0 + end;
    a.thread_id = 31337;
    a.correlation_id = corr;
    b.api_calls.push_back(a);
  };
  auto kern = [&](std::string name, TimeNs start, TimeNs end, std::uint32_t corr,
                  std::uint32_t stream) {
    KernelRecord k;
    k.name = std::move(name);
    k.start = t0 + start;
    k.end = t0 + end;
    k.stream = stream;
    k.context = 1;
    k.correlation_id = corr;
    k.grid_x = 264;
    k.grid_y = k.grid_z = 1;
    k.block_x = 128;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 168;
    k.dynamic_shared_memory = 98304;
    b.kernels.push_back(k);
  };
  marker(1, kMarkerStart, 0, "matmul [flops=1.37e11 bytes=1e8]");
  call("cudaLaunchKernel", ApiDomain::kRuntime, 10, 20, 1);
  call("cuLaunchKernel", ApiDomain::kDriver, 12, 18, 2);
  kern("_ZN7cutlass6KernelINS_4gemmEEEvT_", 1000, 2001, 2, 7);
  marker(1, kMarkerEnd, 30, "");
  marker(2, kMarkerStart, 40, "graph step");
  call("cudaGraphLaunch", ApiDomain::kRuntime, 50, 60, 3);
  kern("triton_poi_fused_add_0", 2100, 2200, 3, 7);
  kern("triton_poi_fused_add_1", 2200, 2300, 3, 8);
  marker(2, kMarkerEnd, 70, "");
  call("cudaMemcpyAsync", ApiDomain::kRuntime, 80, 90, 4);
  MemcpyRecord m;
  m.kind = MemcpyKind::kDtoH;
  m.src_kind = MemoryKind::kDevice;
  m.dst_kind = MemoryKind::kPinned;
  m.bytes = 4096;
  m.start = t0 + 2400;
  m.end = t0 + 2500;
  m.stream = 7;
  m.context = 1;
  m.correlation_id = 4;
  b.memcpys.push_back(m);
  call("cudaStreamSynchronize", ApiDomain::kRuntime, 95, 2600, 5);
  SyncRecord s;
  s.type = SyncType::kStreamSynchronize;
  s.start = t0 + 100;
  s.end = t0 + 2590;
  s.correlation_id = 5;
  s.context = 1;
  s.stream = 7;
  b.syncs.push_back(s);
  return b;
}

using SliceKey = std::tuple<std::int64_t, std::int64_t, std::string, std::string, TimeNs, TimeNs,
                            double, double>;

// Every slice as (pid, tid, cat, name, start, dur, flops, bytes), sorted.
std::vector<SliceKey> slices_of(const Trace& t) {
  std::vector<SliceKey> out;
  for (const auto& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const auto& s : row) {
        const auto m = t.metrics_of(s);
        out.emplace_back(t.processes[track.process].pid, track.tid, std::string(t.str(s.cat)),
                         std::string(t.str(s.name)), s.start, s.dur, m.flops, m.bytes);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::int64_t, std::tuple<std::string, std::string, std::int64_t>> processes_of(
    const Trace& t) {
  std::map<std::int64_t, std::tuple<std::string, std::string, std::int64_t>> out;
  for (const auto& p : t.processes) {
    out[p.pid] = {std::string(t.str(p.name)), std::string(t.str(p.labels)), p.sort_index};
  }
  return out;
}

TEST(CaptureRoundTrip, DecodedTraceSurvivesTheChromeWriterAndReader) {
  const Trace original = decode_to_trace(capture());
  std::string json;
  trace::render_chrome_trace(original, json);
  const trace::ReadResult read = trace::read_chrome_trace_text(json, "capture.json");
  ASSERT_TRUE(read.ok()) << read.error->message();
  const Trace& back = read.trace;
  EXPECT_EQ(back.report.events_skipped, 0u);

  EXPECT_EQ(slices_of(back), slices_of(original));
  EXPECT_EQ(processes_of(back), processes_of(original));

  std::map<std::pair<std::int64_t, std::int64_t>, std::string> names;
  for (const auto& track : original.tracks) {
    names[{original.processes[track.process].pid, track.tid}] =
        std::string(original.str(track.name));
  }
  for (const auto& track : back.tracks) {
    const auto key = std::make_pair(back.processes[track.process].pid, track.tid);
    ASSERT_TRUE(names.count(key)) << key.first << "/" << key.second;
    EXPECT_EQ(back.str(track.name), names[key]);
  }

  // Four flows (kernel, two graph kernels, copy), all joined to the same slices.
  ASSERT_EQ(original.flows.size(), 4u);
  ASSERT_EQ(back.flows.size(), original.flows.size());
  auto ends = [](const Trace& t) {
    std::vector<std::tuple<std::uint64_t, std::string, std::string>> e;
    for (const auto& f : t.flows) {
      EXPECT_TRUE(f.joined());
      if (!f.joined()) continue;
      e.emplace_back(f.id, std::string(t.str(t.tracks[f.from.slice.track].at(f.from.slice).name)),
                     std::string(t.str(t.tracks[f.to.slice.track].at(f.to.slice).name)));
    }
    std::sort(e.begin(), e.end());
    return e;
  };
  EXPECT_EQ(ends(back), ends(original));

  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(back.devices[0].peak_source, "table");
  EXPECT_DOUBLE_EQ(back.devices[0].peak_flops_for("bf16"),
                   original.devices[0].peak_flops_for("bf16"));
  EXPECT_DOUBLE_EQ(back.devices[0].peak_bytes_per_s, original.devices[0].peak_bytes_per_s);

  // Kineto's kernel args come back as written (168 registers: 5376 per warp -> 3 warps per
  // sub-partition -> 12 warps = 3 blocks; shared 98304 + 1024 -> 2 blocks; 2 per SM from
  // the grid: min(2, 2) * 4 / 64 = 12.5% -> 13).
  int checked = 0;
  for (const auto& track : back.tracks) {
    for (const auto& row : track.rows) {
      for (const auto& s : row) {
        if (back.str(s.name) != "void cutlass::Kernel<cutlass::gemm>(cutlass::gemm)") continue;
        ++checked;
        EXPECT_EQ(
            back.args.json(s.args),
            R"({"device":0,"context":1,"stream":7,"correlation":2,"registers per thread":168,)"
            R"("shared memory":98304,"blocks per SM":2,"warps per SM":8,"grid":[264,1,1],)"
            R"("block":[128,1,1],"est. achieved occupancy %":13})");
      }
    }
  }
  EXPECT_EQ(checked, 1);
}

}  // namespace
}  // namespace flopline::capture
