// Measures the Chrome-trace reader end to end: read_chrome_trace_file (file read,
// parse, finalize) on one file, N times, and what the loaded model costs in memory.
//
// usage: bench_reader FILE [RUNS]   (make a file with bench/make_kineto_trace.py)
//
// Prints per run: seconds, MB/s of the file's (decompressed) JSON, events/s; then
// resident memory: VmRSS growth while the model is alive, divided by events, and the
// model's own accounting (slices, instants, strings, args...).
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "flopline/trace/chrome_reader.h"

namespace {

using flopline::trace::ReadResult;
using flopline::trace::Trace;

// A field of /proc/self/status ("VmRSS", "VmHWM") in bytes, or 0.
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

template <typename V>
std::size_t capacity_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

struct ModelBytes {
  std::size_t slices = 0, instants = 0, counters = 0, flows = 0, metrics = 0, strings = 0, args = 0;
  std::size_t total() const {
    return slices + instants + counters + flows + metrics + strings + args;
  }
};

ModelBytes model_bytes(const Trace& t) {
  ModelBytes b;
  for (const auto& track : t.tracks) {
    for (const auto& row : track.rows) b.slices += capacity_bytes(row);
    b.instants += capacity_bytes(track.instants);
  }
  for (const auto& c : t.counters) b.counters += capacity_bytes(c.points);
  b.flows = capacity_bytes(t.flows);
  b.metrics = capacity_bytes(t.metrics);
  b.strings = t.strings.resident_bytes();
  b.args = t.args.resident_bytes();
  return b;
}

// CPU time of the whole process (all threads): on a shared machine it shows the
// work done even when other processes steal the cores.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double mb(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  std::uint64_t json_bytes = 0;
  flopline::trace::ReadOptions opt;
  opt.progress = [&](std::uint64_t, std::uint64_t total, std::uint64_t) {
    json_bytes = total;
    return true;
  };
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const std::size_t rss_before = proc_status_bytes("VmRSS");
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    ReadResult r = flopline::trace::read_chrome_trace_file(path, opt);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.error->message().c_str());
      return 1;
    }
    const std::size_t rss_after = proc_status_bytes("VmRSS");
    const auto& rep = r.trace.report;
    const double events = static_cast<double>(rep.events_total);
    best = std::min(best, s);
    std::printf(
        "run %d: %.3f s (cpu %.3f s), %.0f MB/s, %.2f M events/s (%llu events, %zu slices, %zu "
        "flows)\n",
        i + 1, s, cpu, mb(json_bytes) / s, events / s / 1e6,
        static_cast<unsigned long long>(rep.events_total), r.trace.slice_count(),
        r.trace.flows.size());
    if (i == runs - 1) {
      const ModelBytes b = model_bytes(r.trace);
      std::printf("best: %.3f s = %.0f MB/s of JSON (%.1f MB)\n", best, mb(json_bytes) / best,
                  mb(json_bytes));
      std::printf(
          "resident: VmRSS +%.1f MB while the model is alive = %.1f bytes/event; peak VmHWM %.1f "
          "MB\n",
          mb(rss_after - rss_before), static_cast<double>(rss_after - rss_before) / events,
          mb(proc_status_bytes("VmHWM")));
      std::printf(
          "model: %.1f MB = %.1f bytes/event (slices %.1f, instants %.1f, counters %.1f, flows "
          "%.1f, "
          "metrics %.1f, strings %.1f, args %.1f MB)\n",
          mb(b.total()), static_cast<double>(b.total()) / events, mb(b.slices), mb(b.instants),
          mb(b.counters), mb(b.flows), mb(b.metrics), mb(b.strings), mb(b.args));
      std::printf("model without args: %.1f bytes/event\n",
                  static_cast<double>(b.total() - b.args) / events);
    }
  }
  return 0;
}
