// Every arg flopline writes is declared (flopline/trace/trace_args.h) and in
// docs/TRACE_FORMAT.md's table: the keys of the traces flopline recorded on GPU
// machines (samples/traces, tests/data: counters, NVTX, PyTorch ranges, copies) and of
// a decoded batch with NCCL kernels, peer copies, sets and syncs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/trace_args.h"

namespace flopline::trace {
namespace {

const std::string kRoot = std::string(FLOPLINE_TEST_DATA_DIR) + "/../..";

// Arg keys of every slice of `t`.
void collect_keys(const Trace& t, std::set<std::string>& keys) {
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.args == kNoArgs) continue;
        for (const auto& [k, v] : json_members(t.args.json(s.args))) keys.insert(k);
      }
    }
    for (const Instant& i : track.instants) {
      if (i.args == kNoArgs) continue;
      for (const auto& [k, v] : json_members(t.args.json(i.args))) keys.insert(k);
    }
  }
}

capture::RecordBatch rich_batch() {
  using namespace capture;
  RecordBatch b;
  b.process_id = 7;
  b.rank = 0;
  b.world_size = 2;
  auto call = [&](std::uint32_t corr, TimeNs at) {
    ApiRecord a;
    a.domain = ApiDomain::kRuntime;
    a.name = "cudaLaunchKernel";
    a.cbid = 211;
    a.start = at;
    a.end = at + 10;
    a.process_id = 7;
    a.thread_id = 7;
    a.correlation_id = corr;
    b.api_calls.push_back(a);
  };
  call(1, 100);
  KernelRecord k;
  k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  k.start = 1000;
  k.end = 2000;
  k.correlation_id = 1;
  k.launch_type = LaunchType::kCooperativeSingleDevice;
  k.cluster_x = k.cluster_y = k.cluster_z = 2;
  k.graph_id = 3;
  k.graph_node_id = 4;
  b.kernels.push_back(k);
  NcclCallRecord c;
  c.start = 90;
  c.thread_id = 7;
  c.message_bytes = 4096;
  c.communicator = 9;
  b.nccl_calls.push_back(c);
  call(2, 200);
  MemcpyRecord m;
  m.start = 3000;
  m.end = 4000;
  m.kind = MemcpyKind::kPtoP;
  m.bytes = 1 << 20;
  m.device = 0;
  m.src_device = 0;
  m.dst_device = 1;
  m.correlation_id = 2;
  b.memcpys.push_back(m);
  call(3, 300);
  MemsetRecord s;
  s.start = 4000;
  s.end = 4100;
  s.bytes = 4096;
  s.correlation_id = 3;
  b.memsets.push_back(s);
  call(4, 400);
  SyncRecord y;
  y.type = SyncType::kStreamWaitEvent;
  y.start = 400;
  y.end = 410;
  y.correlation_id = 4;
  y.cuda_event_id = 5;
  y.context = 1;
  b.syncs.push_back(y);
  b.capture_range = "cudaProfilerApi, stop";
  CaptureWindowRecord w;
  w.index = 1;
  w.start = 50;
  w.end = 5000;
  w.open = false;
  w.opened_by = "cudaProfilerStart";
  w.closed_by = "cudaProfilerStop";
  b.capture_windows.push_back(w);
  return b;
}

std::set<std::string> written_keys() {
  std::set<std::string> keys;
  collect_keys(capture::decode_to_trace(rich_batch()), keys);
  for (const char* dir : {"/samples/traces", "/tests/data"}) {
    for (const auto& e : std::filesystem::directory_iterator(kRoot + dir)) {
      const std::string path = e.path().string();
      if (!path.ends_with(".json.gz") && !path.ends_with(".json")) continue;
      ReadResult r = read_chrome_trace_file(path);
      if (!r.ok()) continue;
      // flopline's own recordings only (others, Kineto's, carry their own keys).
      bool flopline = false;
      for (const auto& [k, v] : r.trace.info) flopline = flopline || k == "version";
      const bool recorded =
          std::filesystem::path(path).filename().string().starts_with("flopline") ||
          path.find("/samples/traces/") != std::string::npos;
      if (flopline && recorded) collect_keys(r.trace, keys);
    }
  }
  return keys;
}

TEST(TraceArgs, EveryWrittenKeyIsDeclared) {
  const std::set<std::string> keys = written_keys();
  EXPECT_GT(keys.size(), 30u);  // the traces were found and read
  for (const std::string& k : keys) EXPECT_NE(find_trace_arg(k), nullptr) << "undeclared: " << k;
}

TEST(TraceArgs, CaptureWindowMetadataIsDeclared) {
  const Trace t = capture::decode_to_trace(rich_batch());
  auto declared = [](std::string_view key) {
    for (const TraceArg& a : kCaptureWindowMetadata) {
      if (a.key == key) return true;
    }
    return false;
  };
  int found = 0;
  for (const auto& [k, v] : t.info) {
    if (k.starts_with("capture")) {
      EXPECT_TRUE(declared(k)) << "undeclared: " << k;
      ++found;
    }
  }
  for (const auto& [k, v] : t.extra_top_level) {
    if (k.starts_with("capture")) {
      EXPECT_TRUE(declared(k)) << "undeclared: " << k;
      ++found;
    }
  }
  EXPECT_EQ(found, 3);
}

TEST(TraceArgs, EveryDeclaredKeyIsInTheDocsTable) {
  std::ifstream f(kRoot + "/docs/TRACE_FORMAT.md");
  ASSERT_TRUE(f) << "docs/TRACE_FORMAT.md";
  std::stringstream text;
  text << f.rdbuf();
  for (const TraceArg& a : kTraceArgs) {
    EXPECT_NE(text.str().find("| `" + std::string(a.key) + "` |"), std::string::npos)
        << a.key << ": no row in docs/TRACE_FORMAT.md's Args table";
  }
  for (const TraceArg& a : kCaptureWindowMetadata) {
    EXPECT_NE(text.str().find("| `" + std::string(a.key) + "` |"), std::string::npos)
        << a.key << ": no row in docs/TRACE_FORMAT.md's capture windows table";
  }
}

}  // namespace
}  // namespace flopline::trace
