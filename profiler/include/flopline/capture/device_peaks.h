// Peaks for the devices a trace describes without them: torch.profiler writes
// Kineto's deviceProperties (name, compute capability, SM count) but no peak FLOP/s or
// bandwidth. flopline's peak table (capture/peaks.h, docs/PEAKS.md) fills them from the
// device's name and compute capability, with peak_source "table", so "% of peak" works
// on those traces too. Devices that carry peaks (flopline's own traces) are left alone.
#pragma once

#include "flopline/trace/model.h"

namespace flopline::capture {

void fill_missing_peaks(trace::Trace& trace);

}  // namespace flopline::capture
