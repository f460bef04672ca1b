// Plain records of what a CUDA program did, mirroring the stable fields of CUPTI's
// Activity API (CUpti_ActivityKernel*, Memcpy*, Memset*, API, Synchronization,
// Marker2 + MarkerData, Overhead, Name). src/cupti/cupti_records.cc copies each
// activity record into these structs; everything after that (decoding into the trace
// model, operator attribution, FLOP counts) works on them, so it is tested on a
// machine without a GPU by feeding synthetic records.
//
// Units: every timestamp is int64 nanoseconds on the trace clock (CPU and GPU on one
// timebase; the CUPTI side converts before filling these). Sizes are bytes.
// Identifiers keep CUPTI's widths (uint32 for device, context, stream, correlation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flopline/capture/capture_window.h"
#include "flopline/capture/counters.h"
#include "flopline/trace/collectives.h"
#include "flopline/trace/types.h"

namespace flopline::capture {

using trace::TimeNs;

// CUpti_ActivityLaunchType. Cluster launches are regular or cooperative launches with
// cluster dimensions set; see KernelRecord::is_cluster_launch().
enum class LaunchType : std::uint8_t {
  kRegular = 0,
  kCooperativeSingleDevice = 1,
  kCooperativeMultiDevice = 2,
  kOther = 3,  // any later CUPTI launch type (command lists, ...)
};

// One kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
struct KernelRecord {
  TimeNs start = 0;  // ns
  TimeNs end = 0;    // ns
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  // Equal to the correlation id of the API record that launched it. A CUDA graph
  // launch gives one correlation id to every kernel of the graph.
  std::uint32_t correlation_id = 0;
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0;
  std::int32_t block_x = 0, block_y = 0, block_z = 0;
  std::uint16_t registers_per_thread = 0;
  std::int32_t static_shared_memory = 0;   // bytes per block
  std::int32_t dynamic_shared_memory = 0;  // bytes per block
  std::uint32_t graph_id = 0;              // 0 when not launched from a graph
  std::uint64_t graph_node_id = 0;         // 0 when not launched from a graph
  LaunchType launch_type = LaunchType::kRegular;
  // Thread-block cluster dimensions (compute capability 9.0+); 0 when not a cluster launch.
  std::uint32_t cluster_x = 0, cluster_y = 0, cluster_z = 0;
  std::string name;  // as CUPTI gives it: often a mangled C++ name
  // A launch measured by the range profiler: CUPTI gives its record no times, so it is
  // placed at its launch call with the duration the counters measured
  // (place_replayed_kernels()).
  bool replayed = false;

  std::int64_t blocks() const { return static_cast<std::int64_t>(grid_x) * grid_y * grid_z; }
  std::int64_t threads_per_block() const {
    return static_cast<std::int64_t>(block_x) * block_y * block_z;
  }
  bool is_cluster_launch() const { return cluster_x > 0 && cluster_y > 0 && cluster_z > 0; }
};

// CUpti_ActivityMemcpyKind.
enum class MemcpyKind : std::uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};

// CUpti_ActivityMemoryKind.
enum class MemoryKind : std::uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

inline constexpr std::uint32_t kNoId = 0xffffffffu;

// One copy (CUPTI_ACTIVITY_KIND_MEMCPY, or MEMCPY2 for peer-to-peer copies).
struct MemcpyRecord {
  TimeNs start = 0;  // ns
  TimeNs end = 0;    // ns
  MemcpyKind kind = MemcpyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  std::uint64_t bytes = 0;
  std::uint32_t device = 0;  // the device that executed the copy
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t graph_id = 0;
  std::uint64_t graph_node_id = 0;
  // Peer-to-peer copies (MEMCPY2) only: the two ends. kNoId otherwise.
  std::uint32_t src_device = kNoId, dst_device = kNoId;
  std::uint32_t src_context = kNoId, dst_context = kNoId;
  bool is_peer() const { return src_device != kNoId && dst_device != kNoId; }
};

// One memset (CUPTI_ACTIVITY_KIND_MEMSET).
struct MemsetRecord {
  TimeNs start = 0;  // ns
  TimeNs end = 0;    // ns
  std::uint32_t value = 0;
  std::uint64_t bytes = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t graph_id = 0;
  std::uint64_t graph_node_id = 0;
};

enum class ApiDomain : std::uint8_t { kRuntime, kDriver };

// One CUDA runtime or driver call (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER).
struct ApiRecord {
  ApiDomain domain = ApiDomain::kRuntime;
  std::uint32_t cbid = 0;  // CUPTI callback id of the function
  std::string name;        // "cudaLaunchKernel", "cuLaunchKernelEx", ...
  TimeNs start = 0;        // ns
  TimeNs end = 0;          // ns
  std::uint32_t process_id = 0;
  std::uint32_t thread_id = 0;  // OS thread id
  // CUPTI gives each call its own id; the GPU work it started carries the same id.
  std::uint32_t correlation_id = 0;
  std::uint32_t return_value = 0;  // CUresult or cudaError_t
};

// CUpti_ActivitySynchronizationType.
enum class SyncType : std::uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// One synchronization (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION): the CPU-side wait.
struct SyncRecord {
  SyncType type = SyncType::kUnknown;
  TimeNs start = 0;                  // ns
  TimeNs end = 0;                    // ns
  std::uint32_t correlation_id = 0;  // of the API call that waited
  std::uint32_t context = 0;
  std::uint32_t stream = kNoId;         // kNoId for context synchronization
  std::uint32_t cuda_event_id = kNoId;  // event syncs and stream-wait-event only
};

// CUpti_ActivityObjectKind.
enum class ObjectKind : std::uint8_t {
  kUnknown = 0,
  kProcess = 1,
  kThread = 2,
  kDevice = 3,
  kContext = 4,
  kStream = 5,
};

// What an NVTX object id names: a process/thread pair, or a device/context/stream.
struct ObjectId {
  ObjectKind kind = ObjectKind::kUnknown;
  std::uint32_t process_id = 0;  // kProcess, kThread
  std::uint32_t thread_id = 0;   // kThread (OS thread id)
  std::uint32_t device = 0;      // kDevice, kContext, kStream
  std::uint32_t context = 0;     // kContext, kStream
  std::uint32_t stream = 0;      // kStream
};

// CUpti_ActivityFlag bits of marker records.
enum MarkerFlag : std::uint32_t {
  kMarkerInstant = 1u << 0,  // nvtxMark
  kMarkerStart = 1u << 1,    // nvtxRangeStart / nvtxRangePush
  kMarkerEnd = 1u << 2,      // nvtxRangeEnd / nvtxRangePop
};

// The value kinds NVTX payloads arrive as (CUPTI's CUpti_MetricValueKind subset).
enum class PayloadKind : std::uint8_t { kNone, kUint64, kInt64, kDouble };

// One NVTX marker (CUPTI_ACTIVITY_KIND_MARKER, CUpti_ActivityMarker2) together with its
// CUPTI_ACTIVITY_KIND_MARKER_DATA part (color, category, payload). CUPTI delivers the
// two as separate records with the same id: the CUPTI side either merges them here
// (has_data) or passes MarkerDataRecords in the batch, which decoding merges by id.
struct MarkerRecord {
  std::uint32_t id = 0;     // pairs a start with its end
  std::uint32_t flags = 0;  // MarkerFlag bits
  TimeNs timestamp = 0;     // ns
  std::string name;         // the message; empty on end records
  std::string domain;       // empty for the default domain
  ObjectId object;          // usually kThread: the thread that called NVTX
  // MarkerData part.
  bool has_data = false;
  bool has_color = false;
  std::uint32_t color = 0;  // ARGB
  std::uint32_t category = 0;
  PayloadKind payload_kind = PayloadKind::kNone;
  std::uint64_t payload_u64 = 0;  // kUint64
  std::int64_t payload_i64 = 0;   // kInt64
  double payload_f64 = 0;         // kDouble

  bool is_start() const { return (flags & kMarkerStart) != 0; }
  bool is_end() const { return (flags & kMarkerEnd) != 0; }
  bool is_instant() const { return (flags & kMarkerInstant) != 0; }
};

// CUPTI_ACTIVITY_KIND_MARKER_DATA on its own (see MarkerRecord).
struct MarkerDataRecord {
  std::uint32_t id = 0;
  bool has_color = false;
  std::uint32_t color = 0;  // ARGB
  std::uint32_t category = 0;
  PayloadKind payload_kind = PayloadKind::kNone;
  std::uint64_t payload_u64 = 0;
  std::int64_t payload_i64 = 0;
  double payload_f64 = 0;
};

// CUpti_ActivityOverheadKind.
enum class OverheadKind : std::uint32_t {
  kUnknown = 0,
  kDriverCompiler = 1,
  kCuptiBufferFlush = 1u << 16,
  kCuptiInstrumentation = 2u << 16,
  kCuptiResource = 3u << 16,
  kRuntimeTriggeredModuleLoading = 4u << 16,
  kLazyFunctionLoading = 5u << 16,
  kCommandBufferFull = 6u << 16,
  kActivityBufferRequest = 7u << 16,
  kUvmActivityInit = 8u << 16,
};

// Time CUPTI or the driver spent on its own work (CUPTI_ACTIVITY_KIND_OVERHEAD).
struct OverheadRecord {
  OverheadKind kind = OverheadKind::kUnknown;
  ObjectId object;   // usually kThread
  TimeNs start = 0;  // ns
  TimeNs end = 0;    // ns
};

// A name given to a thread, device, context or stream (CUPTI_ACTIVITY_KIND_NAME, from
// nvtxNameOsThread, nvtxNameCudaStream, ...).
struct NameRecord {
  ObjectId object;
  std::string name;
};

// One GPU as the driver describes it (cudaGetDeviceProperties / cuDeviceGetAttribute).
struct DeviceInfo {
  std::uint32_t ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::int32_t sm_count = 0;
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  std::int64_t clock_khz = 0;         // max SM clock (cudaDevAttrClockRate)
  std::int64_t memory_clock_khz = 0;  // cudaDevAttrMemoryClockRate
  std::int32_t memory_bus_width = 0;  // bits
  std::uint64_t total_memory = 0;     // bytes
  std::int32_t max_warps_per_sm = 0;  // max threads per SM / warp size
  std::int32_t max_blocks_per_sm = 0;
  std::int32_t registers_per_sm = 0;                  // 32-bit registers
  std::int32_t registers_per_block = 0;               // 0: taken as registers_per_sm
  std::int64_t shared_memory_per_sm = 0;              // bytes, the largest carveout
  std::int64_t reserved_shared_memory_per_block = 0;  // bytes (1 KB from Ampere on)
  std::int32_t warp_size = 32;
};

// Hardware counter values of one measured kernel launch (CUPTI's Range Profiling API in
// auto-range, kernel-replay mode: one range per launch). docs/COUNTERS.md.
struct CounterRecord {
  std::uint32_t correlation_id = 0;  // the launch's: its kernel record carries the same id
  std::uint32_t device = 0;
  // Parallel to CounterInfo::plan.metrics; negative for metrics this launch did not
  // collect (function_metrics.h).
  std::vector<double> values;
  // The sampler's id of this measurement (launch_work.h); kNoId in batches made before
  // launches named their source.
  std::uint32_t measurement = kNoId;
  // Why its values miss some of its work ("" when they are complete): it did tensor work
  // outside the metrics learned for its function (FunctionMetrics::learn).
  std::string incomplete = {};
};

// A launch that was not measured because a measurement of the same work key came
// before it (launch_work.h): its kernel takes that measurement's values.
// A launch call a streaming capture wrote before its GPU record came: what the record
// needs of it when it comes (its flow's start, a replayed kernel's place).
struct WrittenCall {
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t thread_id = 0;
};

struct InferredLaunch {
  std::uint32_t correlation_id = 0;  // the launch's outermost call
  std::uint32_t device = 0;
  std::uint32_t source = kNoId;  // CounterRecord::measurement of the measured launch
  bool exact = true;             // false: the arguments could not be read (shape only)
};

// What counting did in a process.
struct CounterInfo {
  bool requested = false;
  std::string chip;                  // "GH100"
  CounterPlan plan;                  // the metrics, what is missing, the replay passes
  std::uint32_t per_signature = 0;   // launches measured per work key; 0 = all
  std::string exclude;               // --counters-exclude: a regex of kernel names never measured
  std::uint64_t measured = 0;        // launches measured
  std::uint64_t work_keys = 0;       // distinct work keys seen (launch_work.h)
  std::uint64_t learned_words = 0;   // argument words learned as not part of the work
  std::uint64_t capturing = 0;       // launches into a stream being captured: not measured
  std::uint64_t unread_layouts = 0;  // functions whose parameter layout the driver did not give
  std::uint64_t failed = 0;          // launches whose measurement failed
  // Measured launches by the replay passes their metric set took (function_metrics.h),
  // fewest passes first.
  std::vector<std::pair<std::size_t, std::uint64_t>> measured_by_passes;
  std::uint64_t incomplete = 0;  // measured launches whose values miss some of their work
  // Host time the measurements took on the launching threads (steady clock), in three
  // parts: configuring the range profiler for another metric set; the measured launch
  // calls, which run the kernel once per replay pass and restore its memory between
  // them; decoding and evaluating the counter data.
  TimeNs configure_ns = 0;
  TimeNs replay_ns = 0;
  TimeNs decode_ns = 0;
  bool metric_sets = false;  // later launches of a function collect its learned set
  std::string unavailable;   // why nothing could be counted ("" when it could)
};

// One PM-sampling interval of one device (--gpu-metrics).
struct GpuMetricSample {
  std::uint32_t device = 0;
  TimeNs start = 0;            // ns
  TimeNs end = 0;              // ns
  std::vector<double> values;  // parallel to GpuMetricsInfo::names
};

struct GpuMetricsInfo {
  bool requested = false;
  std::vector<std::string> names;   // the metrics sampled
  std::vector<std::string> labels;  // what the trace calls them ("SM active %")
  TimeNs interval_ns = 0;
  std::uint64_t overflows = 0;  // times the hardware buffer filled before a decode
  bool unfinished = false;      // the final decode stopped at its time limit
  std::string unavailable;      // why nothing could be sampled ("" when it could)
};

// An NCCL call with its size, from the payload of NCCL's own NVTX range, taken on the
// calling thread when NCCL pushed the range (capture/nccl_calls.h decodes the payload).
struct NcclCallRecord {
  TimeNs start = 0;             // when the range was pushed (trace clock)
  std::uint32_t thread_id = 0;  // OS thread id
  trace::Collective collective = trace::Collective::kAllReduce;
  std::uint64_t message_bytes = 0;  // NCCL's "Message size [bytes]"
  std::uint64_t communicator = 0;   // NCCL's communicator hash; 0 when its NCCL gave none
};

struct ThreadName {
  std::uint32_t thread_id = 0;  // OS thread id
  std::string name;             // from /proc/self/task/TID/comm, say
};

// Everything one process captured. decode() takes the whole batch at once: flows and
// operator attribution need API records, GPU records and markers together.
struct RecordBatch {
  std::uint32_t process_id = 0;
  std::string process_name;  // "python3"
  std::vector<DeviceInfo> devices;
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiRecord> api_calls;
  std::vector<SyncRecord> syncs;
  std::vector<MarkerRecord> markers;
  std::vector<MarkerDataRecord> marker_data;
  std::vector<OverheadRecord> overheads;
  std::vector<NameRecord> names;
  std::vector<ThreadName> thread_names;
  std::uint64_t dropped_records = 0;  // records CUPTI could not deliver (buffer cap)
  // GPU records a forced flush (an exit, a crash, a device reset) delivered for work that
  // had not finished, without times: left out, and counted here (the whole run's).
  std::uint64_t unfinished_records = 0;
  CounterInfo counters;
  std::vector<CounterRecord> counter_records;
  std::vector<InferredLaunch> inferred_launches;
  GpuMetricsInfo gpu_metrics;
  std::vector<GpuMetricSample> gpu_metric_samples;
  std::vector<NcclCallRecord> nccl_calls;  // in the order they were made, per thread
  // The job's rank count (WORLD_SIZE) where the launcher gave one: NCCL kernels' bus
  // bandwidth needs their communicator's, which is this one for the default group.
  std::optional<std::uint32_t> world_size;
  // The process's rank (RANK and friends) when it is a whole number: the trace's
  // distributedInfo, which Holistic Trace Analysis reads rank by rank.
  std::optional<std::uint32_t> rank;
  // The time every trace of one `flopline run` is written relative to
  // (FLOPLINE_TIME_BASE_NS), so ranks share one time axis in tools that ignore
  // baseTimeNanoseconds.
  std::optional<TimeNs> time_base;
  // Capture windows (capture_window.h): the setting in words ("" when the whole run was
  // recorded) and each window that opened, in order.
  std::string capture_range;
  std::vector<CaptureWindowRecord> capture_windows;
};

// Kineto's strings for the enums: "HtoD", "Pageable", "Device", "Event Sync", ...
const char* to_string(MemcpyKind k);
const char* to_string(MemoryKind k);
const char* to_string(SyncType t);
const char* to_string(OverheadKind k);
const char* to_string(LaunchType t);

}  // namespace flopline::capture
