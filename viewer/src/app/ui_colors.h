// The viewer's fixed UI colours (slice colours come from core/colors.h).
#pragma once

#include <imgui.h>

namespace flopline::viewer {

inline constexpr ImU32 kTracksBg = IM_COL32(24, 25, 28, 255);
inline constexpr ImU32 kProcessHeaderBg = IM_COL32(48, 52, 62, 255);
inline constexpr ImU32 kHeaderText = IM_COL32(230, 230, 235, 255);
inline constexpr ImU32 kTrackHeaderText = IM_COL32(190, 195, 205, 255);
inline constexpr ImU32 kHeaderDimText = IM_COL32(130, 135, 145, 255);
inline constexpr ImU32 kSliceText = IM_COL32(0, 0, 0, 255);
inline constexpr ImU32 kMergedText = IM_COL32(235, 235, 235, 255);
inline constexpr ImU32 kGridLine = IM_COL32(255, 255, 255, 18);
inline constexpr ImU32 kRulerBg = IM_COL32(34, 36, 42, 255);
inline constexpr ImU32 kRulerTick = IM_COL32(170, 175, 185, 255);
inline constexpr ImU32 kRulerText = IM_COL32(210, 212, 218, 255);
inline constexpr ImU32 kRangeFill = IM_COL32(90, 160, 255, 40);
inline constexpr ImU32 kRangeEdge = IM_COL32(90, 160, 255, 200);
inline constexpr ImU32 kSelectionOutline = IM_COL32(255, 255, 255, 255);
inline constexpr ImU32 kSearchOutline = IM_COL32(255, 170, 0, 255);
inline constexpr ImU32 kHoverOutline = IM_COL32(255, 255, 255, 160);
inline constexpr ImU32 kFlowArrow = IM_COL32(255, 120, 40, 255);
inline constexpr ImU32 kErrorText = IM_COL32(255, 110, 100, 255);
inline constexpr ImU32 kWarningText = IM_COL32(255, 200, 90, 255);

}  // namespace flopline::viewer
