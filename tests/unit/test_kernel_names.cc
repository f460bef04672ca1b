// Kernel base names (nsys' :base) on the names real traces carry, and names that must
// come back unchanged; and `flopline stats --names base` merging instantiations.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "corpus_dir.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
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

TEST(KernelBaseName, FunctionNamesKeepTheirNamespaces) {
  EXPECT_EQ(kernel_function_name("void at::native::(anonymous namespace)::foo<float>(float*)"),
            "at::native::(anonymous namespace)::foo");
  EXPECT_EQ(kernel_function_name("void ns::Op<int>::run(int) const"), "ns::Op::run");
  EXPECT_EQ(kernel_function_name("triton_poi_fused_gelu_1"), "triton_poi_fused_gelu_1");
}

// Two different functions with one base name stay apart (their qualified names); the
// instantiations of one function become one name.
TEST(KernelBaseName, DifferentFunctionsWithOneBaseNameStayApart) {
  Trace t;
  TraceBuilder b(t);
  const std::uint32_t gpu = b.track(b.process(0), 7, TrackKind::kGpuStream);
  const StringId kernel = t.strings.intern("kernel");
  const char* names[] = {"void a::reduce<1>(int)", "void a::reduce<2>(int)", "void b::reduce(int)",
                         "void c::scale<4>(float*)"};
  for (int i = 0; i < 4; ++i)
    b.add_slice(gpu, Slice{i * 20, 10, t.strings.intern(names[i]), kernel, kNoArgs, kNone});
  b.finalize();
  use_kernel_base_names(t);
  const auto& row = t.tracks[gpu].rows[0];
  EXPECT_EQ(t.str(row[0].name), "a::reduce");
  EXPECT_EQ(t.str(row[1].name), "a::reduce");
  EXPECT_EQ(t.str(row[2].name), "b::reduce");
  EXPECT_EQ(t.str(row[3].name), "scale");
}

// On every kernel name of the corpus and of the bundled traces: a C++ signature gets a
// shorter, non-empty name; after use_kernel_base_names no name of a trace stands for
// two different functions, and each function keeps one name.
void check_base_names_of(const std::string& path, int* kernels) {
  SCOPED_TRACE(path);
  ReadResult r = read_chrome_trace_file(path);
  if (!r.ok()) return;  // files that are not traces are the reader tests' business
  Trace& t = r.trace;
  const StringId kernel = t.strings.find("kernel");
  if (kernel == kNone) return;
  std::vector<std::pair<const Slice*, std::string>> before;  // slice, its full name
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.cat == kernel) before.emplace_back(&s, std::string(t.str(s.name)));
      }
    }
  }
  use_kernel_base_names(t);
  std::map<std::string, std::set<std::string>> functions_of_name;
  std::map<std::string, std::set<std::string>> names_of_function;
  for (const auto& [slice, full] : before) {
    ++*kernels;
    const std::string shown(t.str(slice->name));
    const std::string function = kernel_function_name(full);
    EXPECT_FALSE(shown.empty()) << full;
    if (function != full) {
      EXPECT_LT(shown.size(), full.size()) << full;
    }
    functions_of_name[shown].insert(function);
    names_of_function[function].insert(shown);
  }
  for (const auto& [name, functions] : functions_of_name)
    EXPECT_EQ(functions.size(), 1u) << "'" << name << "' stands for " << functions.size();
  for (const auto& [function, names] : names_of_function)
    EXPECT_EQ(names.size(), 1u) << "'" << function << "' has " << names.size() << " names";
}

TEST(KernelBaseName, EveryCorpusAndBundledKernelNameKeepsFunctionsApart) {
  int kernels = 0;
  const std::filesystem::path samples =
      std::filesystem::path(FLOPLINE_TEST_DATA_DIR).parent_path().parent_path() / "samples" /
      "traces";
  for (const auto& entry : std::filesystem::directory_iterator(samples)) {
    if (entry.path().string().ends_with(".json.gz")) check_base_names_of(entry.path(), &kernels);
  }
  EXPECT_GT(kernels, 1000);
  if (!std::filesystem::exists(std::filesystem::path(FLOPLINE_CORPUS_DIR) / "SOURCES.md")) return;
  for (const auto& entry : std::filesystem::directory_iterator(FLOPLINE_CORPUS_DIR)) {
    const std::string path = entry.path().string();
    if (path.ends_with(".json") || path.ends_with(".json.gz")) check_base_names_of(path, &kernels);
  }
}

}  // namespace
}  // namespace flopline::trace
