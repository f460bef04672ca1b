// What default `--counters` costs the launching thread per unmeasured launch, without a
// GPU: the work-key path of the counter profiler's launch callback (launch_work.h) for
// argument layouts like the training loop's: a few scalars (an elementwise kernel),
// cuBLAS's by-value struct (about 30 words) and PyTorch's foreach and cat metadata
// (about 300 words). Each launch reads its words, marks struct addresses and asks the
// sampler for its key, in the steady state where every key has been measured and the
// operand addresses move from step to step.
//
//   bench_work_keys [LAUNCHES]     default 2,000,000 per layout
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "flopline/capture/launch_work.h"

namespace {

using flopline::capture::argument_words;
using flopline::capture::CountedWork;
using flopline::capture::LaunchShape;
using flopline::capture::ParamLayout;
using flopline::capture::StructAddressWords;
using flopline::capture::WorkSampler;

struct Layout {
  const char* what;
  std::uint32_t struct_bytes;  // one by-value struct parameter (0: none)
  std::uint32_t scalars;       // 8-byte parameters besides it
};

// A device address of "step" s: buffers move between steps, within one allocation pool.
std::uint64_t address(std::uint64_t step, std::uint64_t i) {
  return 0x7f0000000000ull + ((step * 7919 + i * 104729) % 4096) * 0x100000ull;
}

double time_layout(const Layout& l, std::size_t launches) {
  ParamLayout layout;
  layout.known = true;
  std::uint32_t offset = 0;
  if (l.struct_bytes > 0) {
    layout.params.push_back({offset, l.struct_bytes});
    offset += l.struct_bytes;
  }
  for (std::uint32_t i = 0; i < l.scalars; ++i, offset += 8) layout.params.push_back({offset, 8});
  // The struct: sizes in its first words, operand addresses in every fourth word after.
  std::vector<std::uint64_t> blob(l.struct_bytes / 8 + 1, 0);
  std::vector<std::uint64_t> scalars(l.scalars, 0);
  std::vector<const void*> params;
  if (l.struct_bytes > 0) params.push_back(blob.data());
  for (std::uint64_t& v : scalars) params.push_back(&v);

  WorkSampler sampler(1);
  StructAddressWords addresses(layout);
  auto is_device = [](std::uint64_t v) { return v >= 0x7f0000000000ull && v < 0x7f0100000000ull; };
  LaunchShape shape;
  shape.context = 1;
  shape.function = 0x1000;
  shape.grid[0] = 132;
  shape.block[0] = 256;
  std::vector<std::uint64_t> words;
  auto fill = [&](std::uint64_t step) {
    for (std::size_t i = 0; i < blob.size(); ++i)
      blob[i] = i < 2 ? (4096ull | (1024ull << 32)) : (i % 4 == 0 ? address(step, i) : i);
    for (std::size_t i = 0; i < scalars.size(); ++i)
      scalars[i] = i % 2 == 0 ? address(step, i) : 1u << 20;
  };
  // Two measured steps: the key's first launch and the one that learns nothing new.
  for (std::uint64_t step = 0; step < 2; ++step) {
    fill(step);
    argument_words(layout, params.data(), &words);
    addresses.apply(&words, is_device);
    const auto d = sampler.decide(shape, words, true);
    if (d.measure) {
      CountedWork w;
      w.flops = 1e9;
      w.dram_write_bytes = 1e6;
      sampler.measured(d.measurement, w);
    }
  }
  std::size_t measured = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t n = 0; n < launches; ++n) {
    if (n % 64 == 0) fill(2 + n / 64);  // buffers move every 64 launches
    argument_words(layout, params.data(), &words);
    addresses.apply(&words, is_device);
    measured += sampler.decide(shape, words, true).measure;
  }
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (measured > 0)
    std::fprintf(stderr, "%s: %zu launches measured in the steady state\n", l.what, measured);
  return ns / static_cast<double>(launches);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const Layout layouts[] = {
      {"elementwise: 4 scalars", 0, 4},
      {"cuBLAS: 240-byte struct", 240, 0},
      {"foreach/cat: 2400-byte struct", 2400, 1},
  };
  std::printf("%-32s %10s\n", "layout", "ns/launch");
  for (const Layout& l : layouts) std::printf("%-32s %10.1f\n", l.what, time_layout(l, launches));
  return 0;
}
