// What the launchers need to know about the current device, queried once per device:
// attribute queries cost microseconds, a launch should not.
#pragma once

namespace flopline::kernels::detail {

struct DeviceFacts {
  int arch = 0;        // 10*major+minor
  int sms = 1;         // multiprocessors
  bool pools = false;  // stream-ordered memory pools (cudaMallocAsync) supported
};

// Throws CudaError when there is no current device.
DeviceFacts current_device_facts();

}  // namespace flopline::kernels::detail
