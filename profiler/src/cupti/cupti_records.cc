#include "cupti_records.h"

#include <cuda.h>

namespace flopline::cupti {
namespace {

using namespace flopline::capture;

// The record versions this toolkit's CUPTI writes. CUPTI keeps the layout of a given
// struct version forever and adds fields only in new versions, so the version named
// here must be the one the headers we compile against document for each kind.
#if CUDA_VERSION >= 13000
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using PeerCopyActivity = CUpti_ActivityMemcpyPtoP4;
using MemsetActivity = CUpti_ActivityMemset4;
using MarkerActivity = CUpti_ActivityMarker2;
using MarkerDataActivity = CUpti_ActivityMarkerData2;
using OverheadActivity = CUpti_ActivityOverhead3;
using SyncActivity = CUpti_ActivitySynchronization2;
#elif CUDA_VERSION >= 12000
// CUDA 12.x as documented by its cupti_activity.h; not exercised on a GPU here.
using KernelActivity = CUpti_ActivityKernel9;
using MemcpyActivity = CUpti_ActivityMemcpy5;
using PeerCopyActivity = CUpti_ActivityMemcpyPtoP4;
using MemsetActivity = CUpti_ActivityMemset4;
using MarkerActivity = CUpti_ActivityMarker2;
using MarkerDataActivity = CUpti_ActivityMarkerData;
using OverheadActivity = CUpti_ActivityOverhead;
using SyncActivity = CUpti_ActivitySynchronization;
#else
#error "flopline capture needs CUDA 12 or newer"
#endif

TimeNs ns(std::uint64_t t) {
  return static_cast<TimeNs>(t);
}

std::size_t string_bytes(const std::string& s) {
  return s.size() > 15 ? s.capacity() + 1 : 0;  // beyond the small-string buffer
}

ObjectId object_id(CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId& id) {
  ObjectId o;
  switch (kind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS:
      o.kind = ObjectKind::kProcess;
      o.process_id = id.pt.processId;
      break;
    case CUPTI_ACTIVITY_OBJECT_THREAD:
      o.kind = ObjectKind::kThread;
      o.process_id = id.pt.processId;
      o.thread_id = id.pt.threadId;
      break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
      o.kind = ObjectKind::kDevice;
      o.device = id.dcs.deviceId;
      break;
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
      o.kind = ObjectKind::kContext;
      o.device = id.dcs.deviceId;
      o.context = id.dcs.contextId;
      break;
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      o.kind = ObjectKind::kStream;
      o.device = id.dcs.deviceId;
      o.context = id.dcs.contextId;
      o.stream = id.dcs.streamId;
      break;
    default:
      break;
  }
  return o;
}

LaunchType launch_type(std::uint8_t t) {
  return t <= 2 ? static_cast<LaunchType>(t) : LaunchType::kOther;
}

std::size_t add_kernel(const KernelActivity& a, RecordBatch& batch) {
  KernelRecord& k = batch.kernels.emplace_back();
  k.start = ns(a.start);
  k.end = ns(a.end);
  k.device = a.deviceId;
  k.context = a.contextId;
  k.stream = a.streamId;
  k.correlation_id = a.correlationId;
  k.grid_x = a.gridX;
  k.grid_y = a.gridY;
  k.grid_z = a.gridZ;
  k.block_x = a.blockX;
  k.block_y = a.blockY;
  k.block_z = a.blockZ;
  k.registers_per_thread = a.registersPerThread;
  k.static_shared_memory = a.staticSharedMemory;
  k.dynamic_shared_memory = a.dynamicSharedMemory;
  k.graph_id = a.graphId;
  k.graph_node_id = a.graphNodeId;
  k.launch_type = launch_type(a.launchType);
  k.cluster_x = a.clusterX;
  k.cluster_y = a.clusterY;
  k.cluster_z = a.clusterZ;
  if (a.name != nullptr) k.name = a.name;
  return sizeof(KernelRecord) + string_bytes(k.name);
}

// MEMCPY and MEMCPY2 (peer) records share these fields under the same names.
template <typename CopyActivity>
MemcpyRecord& add_copy_fields(const CopyActivity& a, RecordBatch& batch) {
  MemcpyRecord& m = batch.memcpys.emplace_back();
  m.start = ns(a.start);
  m.end = ns(a.end);
  m.kind = a.copyKind <= 10 ? static_cast<MemcpyKind>(a.copyKind) : MemcpyKind::kUnknown;
  m.src_kind = a.srcKind <= 7 ? static_cast<MemoryKind>(a.srcKind) : MemoryKind::kUnknown;
  m.dst_kind = a.dstKind <= 7 ? static_cast<MemoryKind>(a.dstKind) : MemoryKind::kUnknown;
  m.bytes = a.bytes;
  m.device = a.deviceId;
  m.context = a.contextId;
  m.stream = a.streamId;
  m.correlation_id = a.correlationId;
  m.graph_id = a.graphId;
  m.graph_node_id = a.graphNodeId;
  return m;
}

std::size_t add_memcpy(const MemcpyActivity& a, RecordBatch& batch) {
  add_copy_fields(a, batch);
  return sizeof(MemcpyRecord);
}

std::size_t add_peer_copy(const PeerCopyActivity& a, RecordBatch& batch) {
  MemcpyRecord& m = add_copy_fields(a, batch);
  m.src_device = a.srcDeviceId;
  m.dst_device = a.dstDeviceId;
  m.src_context = a.srcContextId;
  m.dst_context = a.dstContextId;
  return sizeof(MemcpyRecord);
}

std::size_t add_memset(const MemsetActivity& a, RecordBatch& batch) {
  MemsetRecord& m = batch.memsets.emplace_back();
  m.start = ns(a.start);
  m.end = ns(a.end);
  m.value = a.value;
  m.bytes = a.bytes;
  m.memory_kind = a.memoryKind <= 7 ? static_cast<MemoryKind>(a.memoryKind) : MemoryKind::kUnknown;
  m.device = a.deviceId;
  m.context = a.contextId;
  m.stream = a.streamId;
  m.correlation_id = a.correlationId;
  m.graph_id = a.graphId;
  m.graph_node_id = a.graphNodeId;
  return sizeof(MemsetRecord);
}

std::size_t add_api(const CUpti_ActivityAPI& a, ApiDomain domain, RecordBatch& batch,
                    ApiNames& names) {
  ApiRecord& r = batch.api_calls.emplace_back();
  r.domain = domain;
  r.cbid = a.cbid;
  r.name = names.get(domain, a.cbid);
  r.start = ns(a.start);
  r.end = ns(a.end);
  r.process_id = a.processId;
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  r.return_value = a.returnValue;
  return sizeof(ApiRecord) + string_bytes(r.name);
}

}  // namespace

std::size_t append_call(const CallRecord& call, std::uint32_t process_id, RecordBatch& batch,
                        ApiNames& names) {
  ApiRecord& r = batch.api_calls.emplace_back();
  r.domain = call.driver ? ApiDomain::kDriver : ApiDomain::kRuntime;
  r.cbid = call.cbid;
  r.name = names.get(r.domain, call.cbid);
  r.start = ns(call.start);
  r.end = ns(call.end);
  r.process_id = process_id;
  r.thread_id = call.thread_id;
  r.correlation_id = call.correlation_id;
  r.return_value = static_cast<std::uint32_t>(call.return_value);
  return sizeof(ApiRecord) + string_bytes(r.name);
}

namespace {

std::size_t add_sync(const SyncActivity& a, RecordBatch& batch) {
  SyncRecord& s = batch.syncs.emplace_back();
  const auto t = static_cast<std::uint32_t>(a.type);
  s.type = t <= 4 ? static_cast<SyncType>(t) : SyncType::kUnknown;
  s.start = ns(a.start);
  s.end = ns(a.end);
  s.correlation_id = a.correlationId;
  s.context = a.contextId;
  s.stream = a.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? kNoId : a.streamId;
  s.cuda_event_id = a.cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? kNoId : a.cudaEventId;
  return sizeof(SyncRecord);
}

std::size_t add_marker(const MarkerActivity& a, RecordBatch& batch) {
  MarkerRecord& m = batch.markers.emplace_back();
  m.id = a.id;
  m.flags = static_cast<std::uint32_t>(a.flags) & (kMarkerInstant | kMarkerStart | kMarkerEnd);
  m.timestamp = ns(a.timestamp);
  if (a.name != nullptr) m.name = a.name;
  if (a.domain != nullptr) m.domain = a.domain;
  m.object = object_id(a.objectKind, a.objectId);
  return sizeof(MarkerRecord) + string_bytes(m.name) + string_bytes(m.domain);
}

std::size_t add_marker_data(const MarkerDataActivity& a, RecordBatch& batch) {
  MarkerDataRecord& d = batch.marker_data.emplace_back();
  d.id = a.id;
  d.has_color = (static_cast<std::uint32_t>(a.flags) & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) != 0;
  d.color = a.color;
  d.category = a.category;
  // CUPTI writes a zero payload of some kind for markers that gave none, so a zero is
  // taken as "no payload" (zero FLOPs would say nothing anyway).
  switch (a.payloadKind) {
    case CUPTI_METRIC_VALUE_KIND_UINT64:
      if (a.payload.metricValueUint64 != 0) {
        d.payload_kind = PayloadKind::kUint64;
        d.payload_u64 = a.payload.metricValueUint64;
      }
      break;
    case CUPTI_METRIC_VALUE_KIND_INT64:
      if (a.payload.metricValueInt64 != 0) {
        d.payload_kind = PayloadKind::kInt64;
        d.payload_i64 = a.payload.metricValueInt64;
      }
      break;
    case CUPTI_METRIC_VALUE_KIND_DOUBLE:
      if (a.payload.metricValueDouble != 0) {
        d.payload_kind = PayloadKind::kDouble;
        d.payload_f64 = a.payload.metricValueDouble;
      }
      break;
    default:
      break;
  }
  return sizeof(MarkerDataRecord);
}

std::size_t add_overhead(const OverheadActivity& a, RecordBatch& batch) {
  OverheadRecord& o = batch.overheads.emplace_back();
  o.kind = static_cast<OverheadKind>(static_cast<std::uint32_t>(a.overheadKind));
  o.object = object_id(a.objectKind, a.objectId);
  o.start = ns(a.start);
  o.end = ns(a.end);
  return sizeof(OverheadRecord);
}

std::size_t add_name(const CUpti_ActivityName& a, RecordBatch& batch) {
  NameRecord& n = batch.names.emplace_back();
  n.object = object_id(a.objectKind, a.objectId);
  if (a.name != nullptr) n.name = a.name;
  return sizeof(NameRecord) + string_bytes(n.name);
}

// Records arrive as CUpti_Activity*; CUPTI aligns each to 8 bytes, and the kind field
// tells the struct. Copying through a reinterpret_cast is how CUPTI's own samples read
// them.
template <class T>
const T& as(const CUpti_Activity* r) {
  return *reinterpret_cast<const T*>(r);
}

}  // namespace

const std::string& ApiNames::get(ApiDomain domain, std::uint32_t cbid) {
  const std::uint64_t key = (static_cast<std::uint64_t>(domain) << 32) | cbid;
  auto it = names_.find(key);
  if (it == names_.end()) it = names_.emplace(key, lookup_(domain, cbid)).first;
  return it->second;
}

// A forced flush (at exit, on a crash) also delivers records of GPU work that had not
// finished; their timestamps are not filled in and they are left out, counted.
template <class T>
bool timed(const T& a) {
  return a.start != 0 && a.end >= a.start;
}

template <class T>
bool timed_or_counted(const T& a, RecordBatch& batch) {
  if (timed(a)) return true;
  ++batch.unfinished_records;
  return false;
}

std::size_t append_activity(const CUpti_Activity* record, RecordBatch& batch, ApiNames& api_names) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      // A launch measured by the range profiler has no times (start = end = 0): kept,
      // and placed or dropped once the counter records are known (kernel_counts.h).
      const KernelActivity& k = as<KernelActivity>(record);
      if (k.start == 0 && k.end == 0) return add_kernel(k, batch);
      return timed_or_counted(k, batch) ? add_kernel(k, batch) : 0;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return timed_or_counted(as<MemcpyActivity>(record), batch)
                 ? add_memcpy(as<MemcpyActivity>(record), batch)
                 : 0;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return timed_or_counted(as<PeerCopyActivity>(record), batch)
                 ? add_peer_copy(as<PeerCopyActivity>(record), batch)
                 : 0;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return timed_or_counted(as<MemsetActivity>(record), batch)
                 ? add_memset(as<MemsetActivity>(record), batch)
                 : 0;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return add_api(as<CUpti_ActivityAPI>(record), ApiDomain::kRuntime, batch, api_names);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return add_api(as<CUpti_ActivityAPI>(record), ApiDomain::kDriver, batch, api_names);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return add_sync(as<SyncActivity>(record), batch);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return add_marker(as<MarkerActivity>(record), batch);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      return add_marker_data(as<MarkerDataActivity>(record), batch);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return add_overhead(as<OverheadActivity>(record), batch);
    case CUPTI_ACTIVITY_KIND_NAME:
      return add_name(as<CUpti_ActivityName>(record), batch);
    default:
      return 0;
  }
}

}  // namespace flopline::cupti
