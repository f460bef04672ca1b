// Slice colours: stable per name (a hash of the bytes, the same in every run and on
// every machine) or per category, and the legend (most time first).
//
// Colours are packed as ImGui's IM_COL32 does: 0xAABBGGRR (red in the low byte).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/slice_handle.h"

namespace flopline::viewer {

enum class ColorBy { kName, kCategory };

// A readable mid-tone colour for a key (FNV-1a hash -> hue; fixed ranges of
// saturation and lightness so black text stays legible).
std::uint32_t color_for_key(std::string_view key);
// Brightened / darkened variants for hover, selection and merged blocks.
std::uint32_t lighten(std::uint32_t rgba, float amount);  // amount in [0, 1]
std::uint32_t darken(std::uint32_t rgba, float amount);

// Colour per StringId of one trace, computed once (4 bytes per string).
class ColorTable {
 public:
  static ColorTable build(const trace::Trace& trace);
  std::uint32_t of(trace::StringId id) const {
    return id < colors_.size() ? colors_[id] : 0xff808080u;
  }
  // The colour of a slice under the chosen rule (by name, or by category).
  std::uint32_t of_slice(const trace::Slice& s, ColorBy by) const {
    return of(by == ColorBy::kName ? s.name : s.cat);
  }

 private:
  std::vector<std::uint32_t> colors_;
};

struct LegendEntry {
  std::string label;
  std::uint32_t color = 0;
  trace::TimeNs total_ns = 0;  // summed slice time (nested slices count on their own)
  std::uint64_t count = 0;
};

// Entries by total time descending (then label), at most max_entries; the rest are
// summed into a last "other" entry (colour grey).
std::vector<LegendEntry> build_legend(TraceList traces, ColorBy by, std::size_t max_entries = 20);

}  // namespace flopline::viewer
