// Measures bytes resident per slice in a finalized model, strings and args aside:
// builds N kernel-like slices (default 10 million) on 16 tracks through TraceBuilder,
// finalizes, and reports the growth of the process's resident set per slice, with
// the peak during building (the builder keeps slices unsorted until finalize).
// Usage: bench_model_memory [N]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "flopline/trace/builder.h"

namespace {

long rss_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::strtol(line.c_str() + key.size(), nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace flopline::trace;
  const long n = argc > 1 ? std::atol(argv[1]) : 10'000'000;
  const long before_kb = rss_kb("VmRSS");
  {
    Trace t;
    TraceBuilder b(t);
    StringId names[64];
    for (int i = 0; i < 64; ++i) names[i] = t.strings.intern("kernel_" + std::to_string(i));
    const StringId cat = t.strings.intern("kernel");
    std::uint32_t tracks[16];
    for (int i = 0; i < 16; ++i) tracks[i] = b.track(b.process(0), i, TrackKind::kGpuStream);
    // Kernels on a stream follow each other; a few overlap (PDL) and go to extra rows.
    TimeNs clock[16] = {};
    for (long i = 0; i < n; ++i) {
      const int s = static_cast<int>(i % 16);
      const TimeNs dur = 1000 + (i * 7919) % 5000;
      const TimeNs start = clock[s] + ((i % 97) == 0 ? -200 : 300);
      clock[s] = start + dur;
      b.add_slice(tracks[s], Slice{start, dur, names[i % 64], cat});
    }
    const long built_kb = rss_kb("VmRSS");
    b.finalize();
    const long final_kb = rss_kb("VmRSS");
    std::size_t rows = 0;
    for (const auto& tr : t.tracks) rows += tr.rows.size();
    std::printf("slices: %zu in %zu rows on %zu tracks (sizeof(Slice) = %zu bytes)\n",
                t.slice_count(), rows, t.tracks.size(), sizeof(Slice));
    std::printf("resident after finalize: %.1f bytes/slice\n", (final_kb - before_kb) * 1024.0 / n);
    std::printf(
        "resident while building (unsorted): %.1f bytes/slice; peak (VmHWM) %.1f bytes/slice\n",
        (built_kb - before_kb) * 1024.0 / n, (rss_kb("VmHWM") - before_kb) * 1024.0 / n);
  }
  return 0;
}
