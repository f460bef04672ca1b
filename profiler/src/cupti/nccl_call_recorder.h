// NCCL's calls with their sizes, read from the payload of NCCL's NVTX ranges in CUPTI's
// NVTX callback (the payload is only valid during the call: the activity MARKER record
// keeps the range's name but not its payload). See capture/nccl_calls.h for the layout.
#pragma once

#include <cupti.h>

#include <vector>

#include "flopline/capture/records.h"

namespace flopline::cupti {

// Turns the NVTX callback for nvtxDomainRangePushEx on or off for `subscriber`.
bool enable_nccl_call_callbacks(CUpti_SubscriberHandle subscriber, bool on);

// Whether on_nccl_call_callback records (off while stopped and in a forked child).
void set_nccl_calls_recording(bool on);

// The subscriber's handler for CUPTI_CB_DOMAIN_NVTX: on the calling thread it decodes a
// payload NCCL attached (a few loads and a timestamp) and keeps one small record.
void on_nccl_call_callback(CUpti_CallbackId cbid, const CUpti_NvtxData* data);

// Every record so far, in the order they were taken.
std::vector<capture::NcclCallRecord> nccl_call_records();

// Moves out the records made since the last take (a streaming capture's append).
std::vector<capture::NcclCallRecord> take_nccl_call_records();

// Forgets the records (what clear_records does to the activity records).
void clear_nccl_call_records();

}  // namespace flopline::cupti
