// Shortens long C++ names of CUDA kernels for the timeline, where a slice is a few
// hundred pixels wide at most: "void at::native::vectorized_elementwise_kernel<4,
// at::native::FillFunctor<float>, ...>(int, ...)" becomes
// "vectorized_elementwise_kernel<...>". Tooltips and the details panel show the full
// name. GL-free, unit-tested.
#pragma once

#include <string>
#include <string_view>

namespace flopline::viewer {

// Drops the return type and the parameter list, collapses template arguments to
// "<...>", removes "(anonymous namespace)::", and drops namespaces when the result is
// still longer than `max_qualified` characters. Short plain names come back unchanged.
std::string short_kernel_name(std::string_view name, std::size_t max_qualified = 40);

}  // namespace flopline::viewer
