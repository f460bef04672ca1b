// Level of detail for one row of slices: what to draw for the visible range, with
// cost that follows pixels, not events (Tracy's technique, ../shared/DESIGN.md).
//
// A row's slices are sorted by start and never overlap (model.h), so their ends are
// sorted too: the end is the running maximum of ends, and the first visible slice is
// a binary search on it. Runs of slices narrower than merge_px that follow each other
// with gaps under merge_px become one merged block with a count. A run is skipped by
// binary search in steps of merge_px (never slice by slice), so a row of 10 million
// slices costs O(width / merge_px * log n) and yields at most ~2 items per 3 px.
// Items cover exactly the visible slices: those ending at or after t0 and starting
// at or before t1, each in one item.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/slice_handle.h"
#include "core/viewport.h"

namespace flopline::viewer {

struct LodParams {
  float merge_px = 3.0f;     // slices narrower than this merge with their neighbours
  float min_item_px = 1.0f;  // every item is drawn at least this wide (a 0.1 px slice shows)
};

struct DrawItem {
  float x0 = 0;                   // window px, clipped to the viewport area (2 px margin)
  float x1 = 0;                   // >= x0 + min_item_px
  std::uint32_t first = 0;        // index in the row of the (first) slice
  std::uint32_t count = 1;        // slices covered: 1 = one slice, > 1 = a merged block
  trace::StringId color_key = 0;  // name id of the slice (of the first slice of a block)
  bool merged() const { return count > 1; }
};

// What one call did, for tests that check the cost follows pixels.
struct LodWork {
  std::size_t searches = 0;  // binary searches
  std::size_t steps = 0;     // loop iterations (items emitted + merge steps)
};

// Appends to `out` the items of `row` visible in `vp`, in increasing x0. `out` is not
// cleared, so several rows can share one buffer.
void visible_items(std::span<const trace::Slice> row, const Viewport& vp,
                   std::vector<DrawItem>& out, const LodParams& params = {},
                   LodWork* work = nullptr);

// The text a merged block of `count` slices shows: "x758", so it reads as a count of
// slices and not as a time or an id.
std::string merged_block_label(std::uint32_t count);

// Index of the first slice of `row` whose end is at or after t_ns (row.size() if none).
std::size_t first_ending_at_or_after(std::span<const trace::Slice> row, std::int64_t t_ns);

}  // namespace flopline::viewer
