#include <nvtx3/nvToolsExt.h>

#include "flopline/capture/nvtx_flops.h"
#include "flopline/session.h"

namespace flopline {

Range::Range(const std::string& name, double flops, double bytes, const std::string& precision,
             const std::string& plan) {
  capture::RangeCounts counts;
  if (flops >= 0) counts.flops = flops;
  if (bytes >= 0) counts.bytes = bytes;
  counts.precision = precision;
  counts.plan = plan;
  // The counts travel in the message suffix that every flopline capture parses
  // (nvtx_flops.h), so the range reads the same in any NVTX tool.
  nvtxRangePushA(capture::format_range_message(name, counts).c_str());
}

Range::~Range() {
  nvtxRangePop();
}

}  // namespace flopline
