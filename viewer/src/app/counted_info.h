// What the details panel says about a slice's counted FLOPs and bytes (docs/COUNTERS.md):
// where its FLOPs came from in words (measured by replay on this launch, or inferred
// from a measured launch of the same signature), the FLOPs of each precision and tensor
// path largest first, DRAM bytes read and written, and for an operator that declared
// its FLOPs, the counted values beside the declared ones. GL-free, unit-tested.
#pragma once

#include <vector>

#include "slice_info.h"

namespace flopline::viewer {

// From the slice's args (SliceInfo::args as describe_slice gives them); empty when the
// slice carries none of these args. Lines of a list ("by precision") have keys
// indented by two spaces.
std::vector<InfoLine> counted_info(const SliceInfo& info);

// The words for a `flops source` arg value: on a kernel (`kernel`), measured by replay
// or inferred from the same signature; on an operator, the sum of its kernels'.
std::string flops_source_words(std::string_view source, bool replayed, bool kernel);

}  // namespace flopline::viewer
