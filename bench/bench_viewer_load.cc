// Measures what flopline-view pays to open a large trace: read_chrome_trace_file with
// the viewer's options (args left in the file, ArgsMode::kOnDemand) plus the viewer's
// model build (layout, flow index, time bounds: viewer::load_files), in MB/s of JSON,
// and what stays resident per event afterwards.
//
// usage: bench_viewer_load FILE [--events N] [--mode viewer|reader|reader-keep] [--runs R]
//
//   FILE that does not exist is written first: a synthetic Kineto-style trace (one event
//   per line) with N kernel and runtime events (default 10,000,000: N/2
//   cudaLaunchKernel calls on 2 CPU threads, N/2 kernels on 4 streams, with Kineto's
//   args), plus an ac2g flow pair (s on the launch, f with "bp":"e" on the kernel) per
//   launch, as the PyTorch profiler writes them. Later runs reuse the file.
//   --mode viewer       viewer::load_files (the default)
//          reader       read_chrome_trace_file with ArgsMode::kOnDemand only
//          reader-keep  read_chrome_trace_file as `flopline stats` does (args kept)
//
// Run each mode in its own process: the resident figure is VmRSS growth, measured
// once after the first run and after malloc_trim(0) (freed heap handed back, as the
// viewer does after loading).
#include <malloc.h>
#include <time.h>

#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "core/load_job.h"
#include "flopline/trace/chrome_reader.h"

namespace {

using flopline::trace::Trace;

std::size_t proc_status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0)
      return std::strtoull(line.c_str() + prefix.size(), nullptr, 10) * 1024;
  }
  return 0;
}

double mb(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Kernel names of the lengths real traces have (cuBLAS, ATen templates, Triton).
const char* const kKernels[] = {
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize256x128x32_warpgroupsize2x1x1_execute_segment_"
    "k_off_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "triton_poi_fused_add_mul_relu_0",
    "triton_red_fused__softmax_native_layer_norm_1",
    "ampere_sgemm_128x64_tn",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
    "float, "
    "float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, "
    "at::native::MeanOps<float, "
    "float, float, float>, unsigned int, float, 4, 4>)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
};
constexpr int kStreams[] = {7, 13, 20, 24};
constexpr int kThreads[] = {1102, 1262};
constexpr long long kBaseUs = 1712195495501688LL;  // a Kineto epoch-microsecond timestamp

// Absolute microseconds with three decimals, as Kineto writes them.
int ts_text(char* p, long long t_ns) {
  const long long us = kBaseUs + t_ns / 1000;
  return std::sprintf(p, "%lld.%03lld", us, t_ns % 1000);
}

bool write_synthetic(const std::string& path, long long events) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    return false;
  }
  std::string buf;
  buf.reserve(16 << 20);
  buf +=
      "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA "
      "H200\",\"totalGlobalMem\":"
      "150110011392,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],\"displayTimeUnit\":"
      "\"ms\","
      "\"traceEvents\":[\n";
  std::mt19937_64 rng(1);
  const long long launches = events / 2;
  long long gpu_free[4] = {0, 0, 0, 0};
  long long cpu_t[2] = {1000, 1500};
  char line[2048];
  for (long long i = 0; i < launches; ++i) {
    const int th = static_cast<int>(i % 2);
    const int tid = kThreads[th];
    const long long t = cpu_t[th];
    const long long ldur = 3000 + static_cast<long long>(rng() % 6000);
    const long long corr = 135000 + i;
    const int si = static_cast<int>(rng() % 4);
    const long long kstart =
        std::max(gpu_free[si], t + 4000 + static_cast<long long>(rng() % 3000));
    const long long kdur = 1000 + static_cast<long long>(rng() % 200000);
    gpu_free[si] = kstart + kdur + 800;
    cpu_t[th] = t + ldur + 500 + static_cast<long long>(rng() % 20000);
    char ts_l[32], ts_k[32];
    ts_text(ts_l, t);
    ts_text(ts_k, kstart);
    int n = std::sprintf(
        line,
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1102,"
        "\"tid\":%d,\"ts\":%s,\"dur\":%lld.%03lld,\"args\":{\"External id\":%lld,\"cbid\":211,"
        "\"correlation\":%lld}},\n",
        tid, ts_l, ldur / 1000, ldur % 1000, i + 1, corr);
    buf.append(line, static_cast<std::size_t>(n));
    n = std::sprintf(
        line,
        "{\"ph\":\"s\",\"id\":%lld,\"pid\":1102,\"tid\":%d,\"ts\":%s,\"cat\":\"ac2g\",\"name\":"
        "\"ac2g\"},\n",
        corr, tid, ts_l);
    buf.append(line, static_cast<std::size_t>(n));
    n = std::sprintf(
        line,
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%s,\"dur\":"
        "%lld.%03lld,\"args\":{\"External id\":%lld,\"queued\":0,\"device\":0,\"context\":1,"
        "\"stream\":%d,\"correlation\":%lld,\"registers per thread\":%d,\"shared memory\":%d,"
        "\"blocks per SM\":%.6f,\"warps per SM\":%.6f,\"grid\":[%d,%d,1],\"block\":[128,1,1],"
        "\"est. achieved occupancy %%\":%d}},\n",
        kKernels[rng() % 8], kStreams[si], ts_k, kdur / 1000, kdur % 1000, i + 1, kStreams[si],
        corr, 16 + static_cast<int>(rng() % 240), static_cast<int>(rng() % 3) * 16384,
        static_cast<double>(rng() % 8000) / 1000.0, static_cast<double>(rng() % 64000) / 1000.0,
        1 + static_cast<int>(rng() % 4096), 1 + static_cast<int>(rng() % 128),
        5 + static_cast<int>(rng() % 95));
    buf.append(line, static_cast<std::size_t>(n));
    n = std::sprintf(line,
                     "{\"ph\":\"f\",\"id\":%lld,\"pid\":0,\"tid\":%d,\"ts\":%s,\"cat\":\"ac2g\","
                     "\"name\":\"ac2g\","
                     "\"bp\":\"e\"},\n",
                     corr, kStreams[si], ts_k);
    buf.append(line, static_cast<std::size_t>(n));
    if (buf.size() > (15u << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  buf +=
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1102,\"tid\":0,\"args\":{\"name\":"
      "\"python\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"python\"}},"
      "\n"
      "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"tid\":0,\"args\":{\"labels\":\"GPU "
      "0\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,\"tid\":0,\"args\":{\"sort_index\":"
      "5000000}}\n"
      "]}\n";
  std::fwrite(buf.data(), 1, buf.size(), f);
  return std::fclose(f) == 0;
}

struct Figures {
  double seconds = 0;
  double cpu = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s FILE [--events N] [--mode viewer|reader|reader-keep] [--runs R]\n",
                 argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  long long events = 10'000'000;
  std::string mode = "viewer";
  int runs = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--events")
      events = std::atoll(argv[i + 1]);
    else if (k == "--mode")
      mode = argv[i + 1];
    else if (k == "--runs")
      runs = std::atoi(argv[i + 1]);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::printf("writing %s: %lld kernel and runtime events...\n", path.c_str(), events);
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    if (!write_synthetic(path, events)) return 1;
    std::printf("written in %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (::stat(path.c_str(), &st) != 0) return 1;
  }
  // MB/s are of the JSON text (decompressed for .json.gz), as bench_reader reports them.
  std::uint64_t json_bytes = 0;
  flopline::trace::ReadOptions progress;
  progress.progress = [&](std::uint64_t, std::uint64_t total, std::uint64_t) {
    json_bytes = total;
    return true;
  };

  for (int run = 0; run < runs; ++run) {
    const std::size_t rss_before = proc_status_bytes("VmRSS");
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    flopline::viewer::LoadResult viewer_result;
    flopline::trace::ReadResult reader_result;
    const Trace* t = nullptr;
    if (mode == "viewer") {
      viewer_result = flopline::viewer::load_files({path}, {}, progress);
      if (!viewer_result.errors.empty()) {
        std::fprintf(stderr, "%s\n", viewer_result.errors.front().c_str());
        return 1;
      }
      t = &viewer_result.files.at(0)->trace;
    } else {
      flopline::trace::ReadOptions opt = progress;
      opt.args = mode == "reader-keep" ? flopline::trace::ArgsMode::kKeep
                                       : flopline::trace::ArgsMode::kOnDemand;
      reader_result = flopline::trace::read_chrome_trace_file(path, opt);
      if (!reader_result.ok()) {
        std::fprintf(stderr, "%s\n", reader_result.error->message().c_str());
        return 1;
      }
      t = &reader_result.trace;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    const double ev_total = static_cast<double>(t->report.events_total);
    const double file_mb = mb(json_bytes);
    std::printf("%s run %d: %.2f s (cpu %.2f s) = %.0f MB/s of JSON (%.0f MB), %.2f M events/s\n",
                mode.c_str(), run + 1, s, cpu, file_mb / s, file_mb, ev_total / s / 1e6);
    if (run > 0) continue;
    if (mode == "viewer") {
      // Args on demand: the first read waits for a gzip file's checkpoint index; then
      // reads of slices spread over the file.
      const auto& file = *viewer_result.files.at(0);
      std::vector<flopline::trace::ArgsId> ids;
      for (const auto& track : t->tracks) {
        for (const auto& row : track.rows) {
          for (std::size_t i = 0; i < row.size(); i += 1 + row.size() / 8) {
            if (row[i].args != flopline::trace::kNoArgs) ids.push_back(row[i].args);
          }
        }
      }
      if (!ids.empty()) {
        auto a0 = std::chrono::steady_clock::now();
        (void)file.args.args_json(*t, ids[0]);
        const double first =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
        std::vector<double> each;
        for (std::size_t i = 1; i < ids.size() && i <= 40; ++i) {
          a0 = std::chrono::steady_clock::now();
          (void)file.args.args_json(*t, ids[i]);
          each.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count());
        }
        std::sort(each.begin(), each.end());
        std::printf(
            "args on demand: first read %.3f s (gzip: waits for the index), then median %.3f ms, "
            "max %.3f ms over %zu reads\n",
            first, each.empty() ? 0.0 : each[each.size() / 2] * 1e3,
            each.empty() ? 0.0 : each.back() * 1e3, each.size());
      }
    }
    const std::size_t rss_loaded = proc_status_bytes("VmRSS");
    malloc_trim(0);
    const std::size_t rss_trimmed = proc_status_bytes("VmRSS");
    std::size_t slices = 0, rows = 0;
    for (const auto& track : t->tracks) {
      for (const auto& row : track.rows) {
        slices += row.capacity() * sizeof(flopline::trace::Slice);
        ++rows;
      }
    }
    const std::size_t args = t->args.resident_bytes();
    const std::size_t strings = t->strings.resident_bytes();
    const std::size_t flows = t->flows.capacity() * sizeof(flopline::trace::Flow);
    const std::size_t flow_index = viewer_result.flows.resident_bytes();
    const std::size_t metrics = t->metrics.capacity() * sizeof(flopline::trace::SliceMetrics);
    const std::size_t layout =
        viewer_result.layout.rows().capacity() * sizeof(flopline::viewer::LayoutRow);
    const std::size_t model = slices + args + flows + flow_index + metrics + layout;
    const double kr =
        static_cast<double>(t->slice_count());  // the synthetic trace: kernels and runtime calls
    const double grown = static_cast<double>(rss_trimmed - rss_before);
    std::printf("events: %.0f in the file (%.0f slices, %zu flows, %zu rows)\n", ev_total, kr,
                t->flows.size() + viewer_result.flows.size(), rows);
    std::printf(
        "resident: VmRSS +%.0f MB after load, +%.0f MB after malloc_trim; peak VmHWM %.0f MB\n",
        mb(rss_loaded - rss_before), mb(rss_trimmed - rss_before), mb(proc_status_bytes("VmHWM")));
    std::printf(
        "  = %.1f bytes per slice, %.1f per trace event, strings aside (strings: %.1f MB)\n",
        (grown - static_cast<double>(strings)) / kr,
        (grown - static_cast<double>(strings)) / ev_total, mb(strings));
    std::printf(
        "model accounting: %.1f bytes per slice: slices %.1f, args %.1f, "
        "model flows %.1f, flow index %.1f, metrics %.1f, layout %.2f\n",
        static_cast<double>(model) / kr, static_cast<double>(slices) / kr,
        static_cast<double>(args) / kr, static_cast<double>(flows) / kr,
        static_cast<double>(flow_index) / kr, static_cast<double>(metrics) / kr,
        static_cast<double>(layout) / kr);
  }
  return 0;
}
