// Pieces of the stats analysis shared by analysis*.cc; not a public interface.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace::detail {

// 128-bit sums: durations summed over tens of millions of slices must not overflow
// even for adversarial inputs (durations near INT64_MAX). __extension__ keeps
// -Wpedantic quiet about the GNU type.
__extension__ typedef __int128 Int128;

// The device each track's slices ran on (nullptr when unknown): the track's GPU
// process's device, matched by DeviceProperties::id; for a non-GPU process, the
// trace's only device when it has exactly one.
std::vector<const DeviceProperties*> devices_by_track(const Trace& trace);

// The slice's "precision" arg, normalized (normalize_precision); "" when it has none.
std::string slice_precision(const Trace& trace, const Slice& s);

// The memory roof of `s` on `dev` (bytes/s): the host link for a copy between host and
// device (a memcpy whose name says HtoD or DtoH), the device memory's bandwidth
// otherwise; 0 when unknown.
double memory_roof(const Trace& trace, const Slice& s, const DeviceProperties& dev);

// Nanoseconds `s` would take at its roofline-attainable rate on `dev`:
//   max(flops / peak_flops[precision], bytes / memory roof)
// (the memory term only when bytes and the roof are known), or bytes / memory roof when
// the slice carries bytes but no (or zero) flops. `precision` is called, last, for
// the normalized precision ("" when unknown). nullopt when that cannot be known: no
// device, flops without a precision, a precision without a peak, bytes without a
// bandwidth. Never guesses.
template <typename PrecisionFn>
std::optional<long double> attainable_ns(const Trace& trace, const Slice& s, const SliceMetrics& m,
                                         const DeviceProperties* dev, PrecisionFn&& precision) {
  if (dev == nullptr) return std::nullopt;
  const bool has_bytes = m.has_bytes() && m.bytes > 0;
  const long double roof = has_bytes ? memory_roof(trace, s, *dev) : 0.0;  // bytes/s
  const bool memory_known = has_bytes && roof > 0;
  const long double memory_ns =
      memory_known ? static_cast<long double>(m.bytes) / roof * 1e9L : 0.0L;
  if (m.has_flops() && m.flops > 0) {
    // The precision comes last: it may parse args text, and most slices never get here.
    if (dev->peak_flops.empty()) return std::nullopt;
    const std::string p = precision();
    if (p.empty()) return std::nullopt;
    const double peak_flops = dev->peak_flops_for(p);  // FLOP/s
    if (!(peak_flops > 0)) return std::nullopt;
    const long double compute_ns = static_cast<long double>(m.flops) / peak_flops * 1e9L;
    // min(peak, AI * bandwidth) as a rate is max(compute time, memory time) as a time.
    return std::max(compute_ns, memory_ns);
  }
  if (memory_known) return memory_ns;
  return std::nullopt;
}

}  // namespace flopline::trace::detail
