// Names of the record enums, spelled as Kineto spells them so that event names and
// args match what other tools already read ("Memcpy HtoD (Pageable -> Device)").
#include "flopline/capture/records.h"

namespace flopline::capture {

const char* to_string(MemcpyKind k) {
  switch (k) {
    case MemcpyKind::kHtoD:
      return "HtoD";
    case MemcpyKind::kDtoH:
      return "DtoH";
    case MemcpyKind::kHtoA:
      return "HtoA";
    case MemcpyKind::kAtoH:
      return "AtoH";
    case MemcpyKind::kAtoA:
      return "AtoA";
    case MemcpyKind::kAtoD:
      return "AtoD";
    case MemcpyKind::kDtoA:
      return "DtoA";
    case MemcpyKind::kDtoD:
      return "DtoD";
    case MemcpyKind::kHtoH:
      return "HtoH";
    case MemcpyKind::kPtoP:
      return "PtoP";
    case MemcpyKind::kUnknown:
      break;
  }
  return "<unknown>";
}

const char* to_string(MemoryKind k) {
  switch (k) {
    case MemoryKind::kUnknown:
      return "Unknown";
    case MemoryKind::kPageable:
      return "Pageable";
    case MemoryKind::kPinned:
      return "Pinned";
    case MemoryKind::kDevice:
      return "Device";
    case MemoryKind::kArray:
      return "Array";
    case MemoryKind::kManaged:
      return "Managed";
    case MemoryKind::kDeviceStatic:
      return "Device Static";
    case MemoryKind::kManagedStatic:
      return "Managed Static";
  }
  return "Unrecognized";
}

const char* to_string(SyncType t) {
  switch (t) {
    case SyncType::kEventSynchronize:
      return "Event Sync";
    case SyncType::kStreamWaitEvent:
      return "Stream Wait Event";
    case SyncType::kStreamSynchronize:
      return "Stream Sync";
    case SyncType::kContextSynchronize:
      return "Context Sync";
    case SyncType::kUnknown:
      break;
  }
  return "Unknown Sync";
}

const char* to_string(OverheadKind k) {
  switch (k) {
    case OverheadKind::kDriverCompiler:
      return "Driver Compiler";
    case OverheadKind::kCuptiBufferFlush:
      return "Buffer Flush";
    case OverheadKind::kCuptiInstrumentation:
      return "Instrumentation";
    case OverheadKind::kCuptiResource:
      return "Resource";
    case OverheadKind::kRuntimeTriggeredModuleLoading:
      return "Runtime Triggered Module Loading";
    case OverheadKind::kLazyFunctionLoading:
      return "Lazy Function Loading";
    case OverheadKind::kCommandBufferFull:
      return "Command Buffer Full";
    case OverheadKind::kActivityBufferRequest:
      return "Activity Buffer Request";
    case OverheadKind::kUvmActivityInit:
      return "UVM Activity Init";
    case OverheadKind::kUnknown:
      break;
  }
  return "Unknown";
}

const char* to_string(LaunchType t) {
  switch (t) {
    case LaunchType::kRegular:
      return "regular";
    case LaunchType::kCooperativeSingleDevice:
      return "cooperative";
    case LaunchType::kCooperativeMultiDevice:
      return "cooperative multi-device";
    case LaunchType::kOther:
      break;
  }
  return "other";
}

}  // namespace flopline::capture
