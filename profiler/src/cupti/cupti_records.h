// Copies CUPTI activity records into flopline's plain records (records.h). The record
// structs are chosen by CUDA_VERSION at compile time and only fields that kept their
// meaning across versions are read. No CUPTI function is called here: the API names come
// from a lookup that cupti_source.cc provides.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "call_recorder.h"
#include "flopline/capture/records.h"

namespace flopline::cupti {

// Names of runtime and driver functions by callback id, looked up once each.
class ApiNames {
 public:
  using Lookup = std::string (*)(capture::ApiDomain domain, std::uint32_t cbid);
  explicit ApiNames(Lookup lookup) : lookup_(lookup) {}
  const std::string& get(capture::ApiDomain domain, std::uint32_t cbid);

 private:
  Lookup lookup_;
  std::unordered_map<std::uint64_t, std::string> names_;
};

// Appends one activity record to `batch` when its kind is one flopline keeps. Returns
// an estimate of the bytes it added (0 when nothing was kept).
std::size_t append_activity(const CUpti_Activity* record, capture::RecordBatch& batch,
                            ApiNames& api_names);

// Appends one call recorded through a callback (call_recorder.h) as an ApiRecord, like
// the RUNTIME/DRIVER activity records it stands in for. Returns the bytes it added.
std::size_t append_call(const CallRecord& call, std::uint32_t process_id,
                        capture::RecordBatch& batch, ApiNames& api_names);

}  // namespace flopline::cupti
