// The plan on a real device: on an H100 or H200 (sm_90, 132 SMs) and on an A100 (sm_80,
// 108 SMs), matmul_softmax_plan, which asks this device for its resident CTAs and
// clusters, gives the plans of the unit tests' table (tests/unit/softmax_plan_cases.h).
// A failure here means the device models there no longer describe the device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "../../unit/softmax_plan_cases.h"
#include "flopline/kernels/softmax.h"
#include "kernel_test_util.h"

namespace flopline::kernels {
namespace {

TEST(SoftmaxPlanOnDevice, TableHoldsOnThisDevice) {
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  const int arch = testing::device_arch();
  const plan_cases::DeviceModel* model = nullptr;
  if (arch == 90 && sms == 132) model = &plan_cases::kH100;
  if (arch == 80 && sms == 108) model = &plan_cases::kA100;
  if (model == nullptr)
    GTEST_SKIP() << "no device model for sm_" << arch << " with " << sms << " SMs";
  const bool hopper = arch == 90;
  for (const plan_cases::Case& c : plan_cases::cases()) {
    MatmulSoftmaxOptions o;
    o.dim = c.dim;
    o.scheme = c.scheme;
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                             std::to_string(c.k) + " " + dtype_name(c.in) + "->" +
                             dtype_name(c.out) + " " + softmax_dim_name(c.dim) + " " +
                             softmax_scheme_name(c.scheme);
    const SoftmaxPlan want = hopper ? c.hopper : c.a100;
    if (want == plan_cases::kRefused) {
      EXPECT_THROW(matmul_softmax_plan(plan_cases::problem(c), o), KernelError) << what;
      continue;
    }
    const MatmulSoftmaxPlan got = matmul_softmax_plan(plan_cases::problem(c), o);
    EXPECT_EQ(std::string(softmax_plan_name(got.plan)), softmax_plan_name(want))
        << what << " (" << got.reason << ")";
    EXPECT_EQ(got.k_splits, hopper ? c.hopper_k_splits : 1) << what;
  }
}

}  // namespace
}  // namespace flopline::kernels
