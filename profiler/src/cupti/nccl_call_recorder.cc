#include "nccl_call_recorder.h"

#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "flopline/capture/nccl_calls.h"

namespace flopline::cupti {
namespace {

struct Store {
  std::mutex mu;
  std::vector<capture::NcclCallRecord> records;
};

Store& store() {
  static Store* s = new Store;  // never destroyed: NCCL may call during exit
  return *s;
}

std::atomic<bool> g_recording{false};

}  // namespace

bool enable_nccl_call_callbacks(CUpti_SubscriberHandle subscriber, bool on) {
  return cuptiEnableCallback(on ? 1 : 0, subscriber, CUPTI_CB_DOMAIN_NVTX,
                             CUPTI_CBID_NVTX_nvtxDomainRangePushEx) == CUPTI_SUCCESS;
}

void set_nccl_calls_recording(bool on) {
  g_recording.store(on, std::memory_order_release);
}

void on_nccl_call_callback(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  if (cbid != CUPTI_CBID_NVTX_nvtxDomainRangePushEx || data == nullptr ||
      !g_recording.load(std::memory_order_acquire)) {
    return;
  }
  const auto* params = static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams);
  if (params == nullptr || params->core.eventAttrib == nullptr) return;
  const nvtxEventAttributes_t& attr = *params->core.eventAttrib;
  // An extended payload: reserved0 says how many nvtxPayloadData_t the address holds.
  if (attr.payloadType != NVTX_PAYLOAD_TYPE_EXT || attr.reserved0 < 1 ||
      attr.payload.ullValue == 0) {
    return;
  }
  const auto* payload = reinterpret_cast<const nvtxPayloadData_t*>(attr.payload.ullValue);
  const auto decoded =
      capture::decode_nccl_payload(payload->schemaId, payload->payload, payload->size);
  if (!decoded) return;
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  thread_local const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  capture::NcclCallRecord r;
  r.start = static_cast<capture::TimeNs>(now);
  r.thread_id = tid;
  r.collective = decoded->collective;
  r.message_bytes = decoded->message_bytes;
  r.communicator = decoded->communicator;
  std::lock_guard<std::mutex> lock(store().mu);
  store().records.push_back(r);
}

std::vector<capture::NcclCallRecord> nccl_call_records() {
  std::lock_guard<std::mutex> lock(store().mu);
  return store().records;
}

std::vector<capture::NcclCallRecord> take_nccl_call_records() {
  std::lock_guard<std::mutex> lock(store().mu);
  std::vector<capture::NcclCallRecord> out = std::move(store().records);
  store().records.clear();
  return out;
}

void clear_nccl_call_records() {
  std::lock_guard<std::mutex> lock(store().mu);
  store().records.clear();
}

}  // namespace flopline::cupti
