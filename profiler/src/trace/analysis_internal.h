// Pieces of the stats analysis shared by analysis*.cc; not a public interface.
#pragma once

#include <optional>
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

// Nanoseconds `s` would take at its roofline-attainable rate on `dev`:
//   max(flops / peak_flops[precision], bytes / peak_bytes_per_s)
// (the memory term only when bytes and the bandwidth are known), or
// bytes / peak_bytes_per_s when the slice carries bytes but no (or zero) flops.
// nullopt when that cannot be known: no device, flops without a "precision" arg, a
// precision without a peak, bytes without a bandwidth. Never guesses.
std::optional<long double> attainable_ns(const Trace& trace, const Slice& s, const SliceMetrics& m,
                                         const DeviceProperties* dev);

}  // namespace flopline::trace::detail
