// Shortens long C++ names of CUDA kernels for the timeline, where a slice is a few
// hundred pixels wide at most: "void at::native::vectorized_elementwise_kernel<4,
// at::native::FillFunctor<float>, ...>(int, ...)" becomes
// "vectorized_elementwise_kernel<...>". Tooltips and the details panel show the full
// name. GL-free, unit-tested.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flopline::viewer {

// Drops the return type and the parameter list, collapses template arguments to
// "<...>", removes "(anonymous namespace)::", and drops namespaces when the result is
// still longer than `max_qualified` characters. Short plain names come back unchanged.
std::string short_kernel_name(std::string_view name, std::size_t max_qualified = 40);

// short_kernel_name of each name, with names that would then read the same (templates
// that differ only in their arguments, "foo<...>") told apart by the part of the full
// name where they differ (trace::disambiguate_names).
std::vector<std::string> distinct_short_kernel_names(std::span<const std::string_view> names,
                                                     std::size_t max_qualified = 40);

// The names the FLOP/s table shows for its rows: kernels (rows by name) by their distinct
// short names, so the table reads like the timeline; operators, categories, streams and
// GPUs as they are. The row's full name is in its tooltip.
std::vector<std::string> table_row_names(std::span<const std::string> names, bool kernels);

}  // namespace flopline::viewer
