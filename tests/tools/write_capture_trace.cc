// Writes a small trace the way `flopline run` does (synthetic CUPTI records through the
// capture's decoder and the Chrome-trace writer), for checks of the written file by
// readers that are not flopline's (tests/cli/test_trace_conventions.py).
//
// Usage: flopline_write_capture_trace OUT.json
#include <cstdio>
#include <string>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_writer.h"

namespace {

using namespace flopline::capture;

RecordBatch batch() {
  RecordBatch b;
  b.process_id = 4242;
  b.process_name = "python3";
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.compute_major = 9;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bus_width = 6016;
  d.total_memory = 150109880320;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.registers_per_block = 65536;
  d.shared_memory_per_sm = 233472;
  d.reserved_shared_memory_per_block = 1024;
  b.devices.push_back(d);
  b.thread_names.push_back({4242, "python3"});
  const TimeNs t0 = 1700000000123456789;
  MarkerRecord start;
  start.id = 1;
  start.flags = kMarkerStart;
  start.timestamp = t0;
  start.name = "matmul [flops=1.37e11 bytes=1e8 precision=tf32]";
  start.object.kind = ObjectKind::kThread;
  start.object.thread_id = 4242;
  MarkerRecord end = start;
  end.flags = kMarkerEnd;
  end.timestamp = t0 + 30;
  end.name.clear();
  b.markers = {start, end};
  ApiRecord call;
  call.name = "cudaLaunchKernel";
  call.domain = ApiDomain::kRuntime;
  call.start = t0 + 10;
  call.end = t0 + 20;
  call.thread_id = 4242;
  call.correlation_id = 1;
  b.api_calls.push_back(call);
  KernelRecord k;
  k.name = "_ZN7cutlass6KernelINS_4gemmEEEvT_";
  k.start = t0 + 1000;
  k.end = t0 + 2001;
  k.stream = 7;
  k.context = 1;
  k.correlation_id = 1;
  k.grid_x = 264;
  k.grid_y = k.grid_z = 1;
  k.block_x = 128;
  k.block_y = k.block_z = 1;
  k.registers_per_thread = 168;
  b.kernels.push_back(k);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.json\n", argv[0]);
    return 2;
  }
  const flopline::trace::Trace t = decode_to_trace(batch());
  const auto r = flopline::trace::write_chrome_trace(t, argv[1]);
  if (!r.ok) {
    std::fprintf(stderr, "%s: %s\n", argv[1], r.error.c_str());
    return 1;
  }
  return 0;
}
