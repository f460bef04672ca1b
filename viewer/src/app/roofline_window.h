// The roofline window: operators placed by arithmetic intensity (FLOPs per byte) and
// achieved TFLOP/s on log-log axes, under the device's memory-bandwidth slope and
// compute ceilings (core/roofline.h). Hover names a point; a click lights its
// instances on the timeline like a table row.
#pragma once

#include <imgui.h>

#include <optional>

#include "app_state.h"
#include "core/roofline.h"

namespace flopline::viewer {

class RooflineWindow {
 public:
  // `table`: the FLOP/s table the points come from (nullptr while it is built).
  // `version` changes whenever the table does.
  void draw(AppState& s, const OpTable* table, std::uint64_t version, bool full, ImVec2 full_pos,
            ImVec2 full_size);
  // Points plotted, nullopt before the first build (state dumps).
  std::optional<std::size_t> point_count() const {
    return roofline_ ? std::optional<std::size_t>(roofline_->points.size()) : std::nullopt;
  }

 private:
  void draw_plot(AppState& s, const OpTable& table);
  std::uint64_t built_version_ = 0;
  std::optional<Roofline> roofline_;
};

}  // namespace flopline::viewer
