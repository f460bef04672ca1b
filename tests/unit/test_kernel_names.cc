// Kernel base names (nsys' :base) on the names real traces carry, and names that must
// come back unchanged; and `flopline stats --names base` merging instantiations.
#include <gtest/gtest.h>

#include "flopline/trace/builder.h"
#include "flopline/trace/kernel_names.h"

namespace flopline::trace {
namespace {

TEST(KernelBaseName, CppSignaturesLoseEverythingButTheName) {
  EXPECT_EQ(kernel_base_name(
                "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::("
                "anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
                "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::"
                "(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
                "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)"),
            "multi_tensor_apply_kernel");
  EXPECT_EQ(kernel_base_name("void at::native::vectorized_elementwise_kernel<4, "
                             "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
                             "at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_base_name("kernel(float*, int)"), "kernel");
  EXPECT_EQ(kernel_base_name("void cutlass::Kernel2<cutlass_80_wmma_tensorop_s161616gemm_f16_32x32_"
                             "128x1_tn_align8>(cutlass_80_wmma_tensorop_s161616gemm_f16_32x32_128x1"
                             "_tn_align8::Params)"),
            "Kernel2");
  EXPECT_EQ(kernel_base_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs4K)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(kernel_base_name("void ns::Op<int>::operator_call(int) const"), "operator_call");
}

TEST(KernelBaseName, OtherNamesComeBackUnchanged) {
  for (const char* n : {"triton_poi_fused_gelu_1", "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT",
                        "Memcpy DtoD (Device -> Device)", "Memset (Device)", "", "f(", "f)",
                        "a<b(int)", "(anonymous)"}) {
    EXPECT_EQ(kernel_base_name(n), n);
  }
}

TEST(KernelBaseName, KernelSlicesAreRenamedAndOthersKept) {
  Trace t;
  TraceBuilder b(t);
  const std::uint32_t gpu = b.track(b.process(0), 7, TrackKind::kGpuStream);
  const std::uint32_t cpu = b.track(b.process(100), 100);
  const StringId kernel = t.strings.intern("kernel");
  b.add_slice(gpu, Slice{0, 10, t.strings.intern("void k<1>(int)"), kernel, kNoArgs, kNone});
  b.add_slice(gpu, Slice{20, 10, t.strings.intern("void k<2>(int)"), kernel, kNoArgs, kNone});
  b.add_slice(
      cpu, Slice{0, 5, t.strings.intern("aten::mm"), t.strings.intern("cpu_op"), kNoArgs, kNone});
  b.finalize();
  use_kernel_base_names(t);
  EXPECT_EQ(t.str(t.tracks[gpu].rows[0][0].name), "k");
  EXPECT_EQ(t.str(t.tracks[gpu].rows[0][1].name), "k");
  EXPECT_EQ(t.str(t.tracks[cpu].rows[0][0].name), "aten::mm");  // operators keep theirs
}

}  // namespace
}  // namespace flopline::trace
