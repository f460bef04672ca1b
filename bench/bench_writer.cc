// Measures the Chrome-trace writer on a Kineto-like GPU trace: N kernels on 8 streams,
// each with Kineto's kernel args, a cudaLaunchKernel slice on a CPU thread and an
// ac2g flow from launch to kernel. Prints render speed (best of 3), the size of a
// kernel event line, and the time to write the file plain and gzip-compressed.
//
//   bench_writer [N=5000000] [output folder=/tmp] [all|kernels|full]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/args.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_writer.h"

namespace {

using namespace flopline::trace;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of this process: on a shared machine wall time also counts the time other
// processes held the CPU; both are printed.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ~50 kernel names as PyTorch/cuBLAS/Triton traces show them: templated ATen
// elementwise kernels of 90-120 characters and short library/Triton names.
std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  const char* functors[] = {"FillFunctor",   "CUDAFunctor_add",     "MulFunctor",
                            "AbsFunctor",    "GeluCUDAKernelImpl",  "sigmoid_kernel_cuda",
                            "BUnaryFunctor", "div_true_kernel_cuda"};
  const char* types[] = {"float", "c10::Half", "c10::BFloat16"};
  for (const char* f : functors) {
    for (const char* t : types) {
      names.push_back(
          std::string("void at::native::vectorized_elementwise_kernel<4, at::native::") + f + "<" +
          t + ">, at::detail::Array<char*, 3> >");
    }
  }
  for (const char* n : {
           "ampere_sgemm_128x64_nn",
           "ampere_sgemm_64x32_sliced1x4_tn",
           "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
           "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1",
           "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT",
           "cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4",
           "triton_poi_fused_add_0",
           "triton_red_fused__softmax_1",
           "triton_per_fused_native_layer_norm_2",
           "triton_tem_fused_mm_3",
           "flash_fwd_kernel",
           "Memset (Device)",
           "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>",
           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, MeanOps<float> > >",
           "void at::native::index_elementwise_kernel<128, 4>",
           "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>",
           "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>",
           "void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4>",
           "void splitKreduce_kernel<32, 16, int, float, float, float, float, true>",
           "void at::native::elementwise_kernel<128, 2>",
           "matmul_kernel",
           "softmax_kernel",
           "add_kernel",
           "flopline::kernels::matmul_tf32<128, 128, 32>",
           "flopline::kernels::fused_matmul_softmax_rows<64, 128>",
           "flopline::kernels::elementwise_add_vec4",
       }) {
    names.push_back(n);
  }
  return names;
}

struct Built {
  Trace trace;
  std::uint64_t kernels = 0;
};

// Kernels on 8 streams of device 0, launches on one CPU thread, one flow per kernel.
void build(Built& out, std::uint64_t n, bool with_launches) {
  Trace& t = out.trace;
  TraceBuilder b(t);
  const auto names = kernel_names();
  std::vector<StringId> name_ids;
  for (const auto& name : names) name_ids.push_back(t.strings.intern(name));
  const StringId kernel = t.strings.intern("kernel");
  const StringId runtime = t.strings.intern("cuda_runtime");
  const StringId launch = t.strings.intern("cudaLaunchKernel");
  const StringId ac2g = t.strings.intern("ac2g");
  const std::uint32_t gpu = b.process(0);
  const std::uint32_t cpu = b.process(3141592);
  t.processes[cpu].name = t.strings.intern("python3");
  const std::uint32_t thread = b.track(cpu, 3141592);
  const std::int64_t stream_ids[8] = {7, 13, 14, 15, 16, 17, 18, 19};
  std::uint32_t streams[8];
  for (int s = 0; s < 8; ++s) streams[s] = b.track(gpu, stream_ids[s], TrackKind::kGpuStream);
  t.processes[gpu].is_gpu = true;
  t.processes[gpu].device = 0;

  t.args.reserve_bytes(n * (with_launches ? 160 : 130));
  ArgsBuilder a;
  std::uint64_t rng = 0x9e3779b97f4a7c15ull;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  const TimeNs t0 = 1'760'000'000'123'456'789;  // a 2025 epoch time in ns
  TimeNs cpu_time = t0;
  TimeNs stream_free[8] = {};
  for (int s = 0; s < 8; ++s) stream_free[s] = t0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t r = next();
    const int s = static_cast<int>(i % 8);
    const std::int64_t correlation = static_cast<std::int64_t>(i) + 1000;
    const TimeNs launch_dur = 2500 + static_cast<TimeNs>(r % 2000);
    const TimeNs start = std::max(stream_free[s], cpu_time + launch_dur + 1500);
    const TimeNs dur = 1500 + static_cast<TimeNs>((r >> 16) % 200'000);
    stream_free[s] = start + dur + 700;

    a.clear();
    a.add("device", 0)
        .add("stream", stream_ids[s])
        .add("correlation", correlation)
        .add_ints("grid", {static_cast<std::int64_t>(1 + (r >> 24) % 4096), 1, 1})
        .add_ints("block", {(r >> 36) % 2 ? 256 : 128, 1, 1})
        .add("registers per thread", static_cast<std::int64_t>(16 + (r >> 40) % 8 * 16))
        .add("shared memory", static_cast<std::int64_t>((r >> 44) % 4 * 16384));
    Slice k;
    k.start = start;
    k.dur = dur;
    k.name = name_ids[(r >> 50) % name_ids.size()];
    k.cat = kernel;
    k.args = t.args.add_json(a.finish());
    b.add_slice(streams[s], k);
    ++out.kernels;

    if (with_launches) {
      a.clear();
      a.add("cbid", 211).add("correlation", correlation);
      Slice l;
      l.start = cpu_time;
      l.dur = launch_dur;
      l.name = launch;
      l.cat = runtime;
      l.args = t.args.add_json(a.finish());
      b.add_slice(thread, l);
      Flow f;
      f.id = static_cast<std::uint64_t>(correlation);
      f.name = ac2g;
      f.cat = ac2g;
      f.from = {thread, cpu_time, true, {}};
      f.to = {streams[s], start, true, {}};
      b.add_flow(f);
    }
    cpu_time += launch_dur + 500 + static_cast<TimeNs>((r >> 20) % 3000);
  }
  b.finalize();
}

struct LineStats {
  std::uint64_t kernel_lines = 0;
  std::uint64_t kernel_bytes = 0;  // including the ",\n" that ends each line
  std::uint64_t lines = 0;
};

LineStats measure_lines(const std::string& text) {
  LineStats st;
  constexpr std::string_view kKernel = R"({"ph":"X","cat":"kernel",)";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size() - 1;
    ++st.lines;
    if (std::string_view(text).substr(pos, kKernel.size()) == kKernel) {
      ++st.kernel_lines;
      st.kernel_bytes += nl + 1 - pos;
    }
    pos = nl + 1;
  }
  return st;
}

void report_render(const char* label, const Trace& t, std::uint64_t kernels, std::string& out) {
  double best = 1e300, first = 0, best_cpu = 1e300;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = Clock::now();
    const double c0 = cpu_seconds();
    render_chrome_trace(t, out);
    const double s = seconds_since(t0);
    best_cpu = std::min(best_cpu, cpu_seconds() - c0);
    if (round == 0) first = s;
    best = std::min(best, s);
  }
  const LineStats st = measure_lines(out);
  const std::uint64_t events = st.lines - 2;  // header and footer lines
  std::printf("%s: %llu events (%llu kernels), %.1f MB\n", label,
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(kernels),
              static_cast<double>(out.size()) / 1e6);
  std::printf(
      "  render best of 3: %.3f s wall, %.3f s CPU (first run %.3f s wall, with page faults)\n",
      best, best_cpu, first);
  std::printf("  kernel events/s:  %.2f M   (kernel slices / whole render time)\n",
              static_cast<double>(kernels) / best / 1e6);
  std::printf("  all events/s:     %.2f M\n", static_cast<double>(events) / best / 1e6);
  std::printf("  output:           %.0f MB/s\n", static_cast<double>(out.size()) / best / 1e6);
  std::printf("  kernel event line: %.1f bytes on average (with its \",\\n\")\n",
              static_cast<double>(st.kernel_bytes) / static_cast<double>(st.kernel_lines));
}

void report_file(const Trace& t, const std::string& path, int gzip_level) {
  WriteOptions opt;
  opt.gzip_level = gzip_level;
  const auto t0 = Clock::now();
  const WriteResult r = write_chrome_trace(t, path, opt);
  const double s = seconds_since(t0);
  if (!r.ok) {
    std::printf("  %s: %s\n", path.c_str(), r.error.c_str());
    return;
  }
  const auto size = std::filesystem::file_size(path);
  std::printf("  write %-28s %.3f s, %.1f MB on disk, %.0f MB/s of JSON\n", path.c_str(), s,
              static_cast<double>(size) / 1e6, static_cast<double>(r.bytes_written) / s / 1e6);
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5'000'000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  const std::string_view what = argc > 3 ? argv[3] : "all";
  std::printf("bench_writer: %llu kernels on 8 streams\n", static_cast<unsigned long long>(n));
  if (what == "all" || what == "kernels") {
    Built kernels_only;
    auto t0 = Clock::now();
    build(kernels_only, n, false);
    std::printf("built kernels-only trace in %.2f s\n", seconds_since(t0));
    std::string out;
    report_render("kernels only", kernels_only.trace, kernels_only.kernels, out);
  }
  if (what == "kernels") return 0;
  Built full;
  auto t0 = Clock::now();
  build(full, n, true);
  std::printf("built full trace (kernels + launches + flows) in %.2f s\n", seconds_since(t0));
  {
    std::string out;
    report_render("kernels + launches + flows", full.trace, full.kernels, out);
  }
  std::printf("files (render + write, gzip level 1 for .gz):\n");
  report_file(full.trace, dir + "/bench_writer.json", 1);
  report_file(full.trace, dir + "/bench_writer.json.gz", 1);
  return 0;
}
