// What a streaming capture holds and what each append costs against the run's length,
// without a GPU: synthetic launches (a cudaLaunchKernel call and its kernel, a PyTorch
// elementwise kernel's name) at 30,000 a second, 30 per operator range, 300 per step
// range, all inside a "train" range open for the whole run, handed to a
// StreamingDecoder in parts of one append interval (5 s of the run, 150,000 launches) as
// the capture's thread would, each append's events rendered and written to a file
// finished in place at the end (/dev/null unless a path is given; the bytes are counted).
//
//   bench_streaming_capture [LAUNCHES...] [--out PATH] [--whole]
//
// Default sizes 1M, 4M and 16M launches. --whole also times, at the last append, what
// an append cost before streaming: decoding every record of the run so far.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/streaming_decoder.h"
#include "flopline/trace/incremental_trace.h"

namespace {

using flopline::capture::ApiRecord;
using flopline::capture::KernelRecord;
using flopline::capture::MarkerRecord;
using flopline::capture::RecordBatch;
using flopline::trace::TimeNs;

constexpr long kLaunchesPerSecond = 30'000;
constexpr TimeNs kGap = 1'000'000'000 / kLaunchesPerSecond;  // ns between launches
constexpr TimeNs kInterval = 5'000'000'000;                  // the default flush interval
constexpr TimeNs kSettle = 500'000'000;
constexpr long kPerOp = 30, kPerStep = 300;
constexpr std::uint32_t kThread = 1000;
constexpr TimeNs kStart = 1'000'000'000;

MarkerRecord marker(std::uint32_t id, TimeNs ts, std::uint32_t flags, std::string name) {
  MarkerRecord m;
  m.id = id;
  m.flags = flags;
  m.timestamp = ts;
  m.name = std::move(name);
  m.object.kind = flopline::capture::ObjectKind::kThread;
  m.object.process_id = kThread;
  m.object.thread_id = kThread;
  return m;
}

// Launches [first, last) with their ranges; kernels run 20 us after their call.
void launches(long first, long last, long total, RecordBatch& b) {
  for (long i = first; i < last; ++i) {
    const TimeNs t = kStart + i * kGap;
    const auto id = static_cast<std::uint32_t>(i);
    if (i == 0)
      b.markers.push_back(marker(1u << 31, t - 100, flopline::capture::kMarkerStart, "train"));
    if (i % kPerStep == 0)
      b.markers.push_back(marker((1u << 30) + id, t - 50, flopline::capture::kMarkerStart,
                                 "step " + std::to_string(i / kPerStep)));
    if (i % kPerOp == 0)
      b.markers.push_back(
          marker((1u << 29) + id, t - 20, flopline::capture::kMarkerStart, "aten::add_"));
    ApiRecord a;
    a.name = "cudaLaunchKernel";
    a.cbid = 211;
    a.start = t;
    a.end = t + 2500;
    a.process_id = a.thread_id = kThread;
    a.correlation_id = id + 1;
    KernelRecord k;
    k.start = t + 20'000;
    k.end = k.start + 2000;
    k.context = 1;
    k.stream = 7;
    k.correlation_id = a.correlation_id;
    k.grid_x = 1024;
    k.grid_y = k.grid_z = 1;
    k.block_x = 128;
    k.block_y = k.block_z = 1;
    k.name =
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "std::array<char*, 3ul> >(int, T2, T3)_" +
        std::to_string(i % 50);
    b.api_calls.push_back(std::move(a));
    b.kernels.push_back(std::move(k));
    const TimeNs end = t + 3000;
    if (i % kPerOp == kPerOp - 1)
      b.markers.push_back(marker((1u << 29) + static_cast<std::uint32_t>(i - kPerOp + 1), end,
                                 flopline::capture::kMarkerEnd, ""));
    if (i % kPerStep == kPerStep - 1)
      b.markers.push_back(marker((1u << 30) + static_cast<std::uint32_t>(i - kPerStep + 1),
                                 end + 10, flopline::capture::kMarkerEnd, ""));
    if (i == total - 1)
      b.markers.push_back(marker(1u << 31, end + 20, flopline::capture::kMarkerEnd, ""));
  }
}

double resident_mb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Row {
  long launches = 0;
  std::size_t appends = 0;
  double median_ms = 0, max_ms = 0, last_ms = 0;
  std::size_t most_held = 0;
  double most_held_mb = 0;
  double rss_first_minute = 0, rss_end = 0, rss_peak = 0;
  double file_mb = 0;
  double whole_ms = -1;
};

Row run(long total, const std::string& out, bool whole) {
  Row row;
  row.launches = total;
  flopline::capture::StreamingDecoder decoder;
  flopline::trace::IncrementalTraceFile file(out);
  RecordBatch all;  // --whole only
  std::vector<double> took;
  const long per_part = kInterval / kGap;
  std::string error;
  for (long first = 0; first < total; first += per_part) {
    const long last = std::min(total, first + per_part);
    RecordBatch part;
    part.process_id = kThread;
    launches(first, last, total, part);
    if (whole) {
      RecordBatch copy = part;
      for (auto& k : copy.kernels) all.kernels.push_back(std::move(k));
      for (auto& a : copy.api_calls) all.api_calls.push_back(std::move(a));
      for (auto& m : copy.markers) all.markers.push_back(std::move(m));
    }
    const bool end = last == total;
    const TimeNs now = kStart + last * kGap;
    const auto t0 = std::chrono::steady_clock::now();
    decoder.add(std::move(part));
    const flopline::trace::Trace t =
        decoder.take(end ? flopline::capture::kEndOfRun : now - kSettle);
    if (!file.append_all(t, &error) || (end && !file.finish(t, &error))) {
      std::fprintf(stderr, "bench_streaming_capture: %s\n", error.c_str());
      std::exit(1);
    }
    took.push_back(ms_since(t0));
    row.most_held = std::max(row.most_held, decoder.held().open());
    row.most_held_mb =
        std::max(row.most_held_mb, static_cast<double>(decoder.held_bytes()) / (1 << 20));
    if (now - kStart <= 60'000'000'000) row.rss_first_minute = resident_mb();
  }
  row.appends = took.size();
  row.last_ms = took.back();
  row.max_ms = *std::max_element(took.begin(), took.end());
  std::sort(took.begin(), took.end());
  row.median_ms = took[took.size() / 2];
  row.rss_end = resident_mb();
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  row.rss_peak = static_cast<double>(u.ru_maxrss) / 1024;
  row.file_mb = static_cast<double>(file.bytes()) / (1 << 20);
  if (whole) {
    all.process_id = kThread;
    const auto t0 = std::chrono::steady_clock::now();
    const flopline::trace::Trace t = flopline::capture::decode_to_trace(all);
    row.whole_ms = ms_since(t0);
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes;
  std::string out = "/dev/null";
  bool whole = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (std::strcmp(argv[i], "--whole") == 0) {
      whole = true;
    } else {
      const long n = std::strtol(argv[i], nullptr, 10);
      if (n <= 0) {
        std::fprintf(stderr,
                     "usage: bench_streaming_capture [LAUNCHES...] [--out PATH] [--whole]\n");
        return 2;
      }
      sizes.push_back(n);
    }
  }
  if (sizes.empty()) sizes = {1'000'000, 4'000'000, 16'000'000};
  std::printf("%10s %8s %10s %10s %10s %12s %10s %12s %10s %10s %10s%s\n", "launches", "appends",
              "append ms", "(max)", "(last)", "held records", "held MB", "RSS 1st min", "RSS end",
              "RSS peak", "file MB", whole ? "   whole decode ms" : "");
  for (const long n : sizes) {
    std::fflush(stdout);
    // A process per size: its resident memory is its own run's.
    const pid_t child = fork();
    if (child != 0) {
      int status = 0;
      waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
      continue;
    }
    const Row r = run(n, out, whole);
    std::printf("%10ld %8zu %10.1f %10.1f %10.1f %12zu %10.2f %12.1f %10.1f %10.1f %10.1f",
                r.launches, r.appends, r.median_ms, r.max_ms, r.last_ms, r.most_held,
                r.most_held_mb, r.rss_first_minute, r.rss_end, r.rss_peak, r.file_mb);
    if (r.whole_ms >= 0) std::printf(" %17.1f", r.whole_ms);
    std::printf("\n");
    std::fflush(stdout);
    _exit(0);
  }
  return 0;
}
