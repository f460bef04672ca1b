// Runtime and driver function names as CUPTI gives them, sorted into the groups the
// capture records (capture_config.h's kKindQueries and kKindCalls). Kept apart from
// capture_config.h so that C++17 code (CUDA benchmarks) can use them.
#pragma once

#include <string_view>

namespace flopline::capture {

// A runtime or driver function name without CUPTI's version suffixes
// ("cudaGetDeviceProperties_v2_v12000" -> "cudaGetDeviceProperties").
std::string_view api_base_name(std::string_view name);
// True for the calls kKindQueries stands for (by base name).
bool is_query_api(std::string_view name);
// True for the calls kKindCalls records: launches (kernels, graphs, cooperative),
// copies, sets, allocations, frees, synchronizations, event records and stream waits.
bool is_recorded_call(std::string_view name);

}  // namespace flopline::capture
