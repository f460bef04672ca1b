// Kernel base names, as nsys stats' `:base` shows them: a demangled C++ kernel signature
// without its return type, namespaces, template arguments and parameters
// ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>(...)" ->
// "multi_tensor_apply_kernel"). `flopline stats --names base` and `flopline diff`
// group kernels by it, so the instantiations of one kernel make one row.
#pragma once

#include <string>
#include <string_view>

#include "flopline/trace/model.h"

namespace flopline::trace {

// The base name of a demangled C++ signature. A name that is not one (Triton's
// "triton_poi_fused_gelu_1", cuBLAS's "nvjet_sm90_tst_...", "Memcpy DtoD (Device ->
// Device)": no parameter list right after a name, no "::") comes back unchanged, and
// so does anything whose brackets do not balance.
std::string kernel_base_name(std::string_view name);

// The function a demangled C++ signature names, with its namespaces and classes but
// without return type, template arguments and parameters ("at::native::(anonymous
// namespace)::multi_tensor_apply_kernel"); other names unchanged, as kernel_base_name.
std::string kernel_function_name(std::string_view name);

// Renames every kernel slice (category "kernel") of `t` to its base name, except where
// two different functions of the trace share a base name (foo in two namespaces): those
// keep their functions' qualified names, so distinct kernels stay distinct rows. The
// instantiations of one function template do become one name.
void use_kernel_base_names(Trace& t);

// Renames every kernel slice of `t` to the name the driver gave it (mangled), from the
// trace's top-level "mangledKernelNames" object (demangled -> mangled, written by
// flopline's capture for the names it demangled); names not in it stay. False when the
// trace has no such object (other tools' traces): nothing is renamed.
bool use_kernel_mangled_names(Trace& t);

}  // namespace flopline::trace
