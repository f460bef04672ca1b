// What is under the mouse: the draw item (slice or merged block) at (x, y), found with
// the same LOD pass and pixel widths the drawing uses, so a hover always names what
// is drawn there.
#pragma once

#include <cstdint>
#include <optional>

#include "core/lod.h"
#include "core/slice_handle.h"
#include "core/timeline_layout.h"
#include "core/viewport.h"

namespace flopline::viewer {

struct Hit {
  SliceHandle slice;             // the slice; for a merged block, the one nearest x in it
  std::uint32_t layout_row = 0;  // index into TimelineLayout::rows()
  DrawItem item;                 // what is drawn there (count > 1: a merged block)
};

// x in window px; y in timeline content px (add the scroll offset first). nullopt
// when (x, y) is over no item (a gap, a header, outside the timeline area).
std::optional<Hit> hit_test(TraceList traces, const TimelineLayout& layout, const Viewport& vp,
                            float x, float y, const LodParams& params = {});

}  // namespace flopline::viewer
