// NCCL calls and the kernels that ran them. NCCL opens an NVTX range (domain "NCCL") for
// each API call, with a binary payload that says the message size and communicator;
// CUPTI's NVTX callback hands flopline the payload while the range is pushed, and these
// pure functions decode it and tie each call to the NCCL kernel that carried it out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::capture {

// NVTX's first static payload schema id (NVTX_PAYLOAD_SCHEMA_ID_STATIC_START); NCCL's
// schema ids are this plus its NVTX_SID_* numbers.
inline constexpr std::uint64_t kNvtxStaticSchemaStart = std::uint64_t{1} << 24;

struct NcclPayload {
  trace::Collective collective = trace::Collective::kAllReduce;
  std::uint64_t message_bytes = 0;
  std::uint64_t communicator = 0;  // 0 when the layout has none
};

// The collective and size in one NCCL payload (`size` bytes at `data`), or none when the
// schema is not one of NCCL's collectives or the size fits no layout NCCL has used:
//   NCCL 2.25 and later: {uint64 communicator hash; size_t bytes; ...}
//   earlier (2.16-2.24): {size_t bytes; ...}, no communicator.
// Sizes tell them apart: AllGather and AlltoAll payloads are 16 bytes (8 before), the
// others 24 (16 before). A payload that matches neither is not NCCL's and is ignored.
std::optional<NcclPayload> decode_nccl_payload(std::uint64_t schema_id, const void* data,
                                               std::size_t size);

using trace::is_nccl_kernel;  // flopline/trace/collectives.h

// One launch of an NCCL kernel, by the call that launched it.
struct NcclKernelLaunch {
  std::uint32_t thread_id = 0;
  TimeNs launch_start = 0;
  std::string_view kernel_name;
};

// What one NCCL kernel carried out: the calls NCCL made before launching it.
struct KernelCollective {
  trace::Collective collective = trace::Collective::kAllReduce;
  std::uint64_t message_bytes = 0;  // summed over the calls of a group
  std::uint32_t calls = 0;
  std::uint64_t communicator = 0;
};

// For each launch (same order), the NCCL calls made on its thread after the previous
// NCCL kernel launch of that thread and up to its own: one call outside a group, the
// calls of an ncclGroupStart/End group (launched at the group's end). None when there
// was no such call (NCCL's NVTX ranges off, or an older NCCL), when the calls are of
// different collectives or communicators, or when the kernel's name is not the
// collective's (AlltoAll, Gather, Scatter, Send and Recv run as SendRecv kernels).
std::vector<std::optional<KernelCollective>> match_nccl_calls(
    const std::vector<NcclCallRecord>& calls, const std::vector<NcclKernelLaunch>& launches);

}  // namespace flopline::capture
