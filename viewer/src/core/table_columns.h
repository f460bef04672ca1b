// Widths in the FLOP/s table that follow its content (GL-free, unit-tested).
#pragma once

namespace flopline::viewer {

// The Name column's width: as wide as the longest name shown (`longest_name_px`, text
// plus padding), at least 12 characters so short names leave room to click, and at
// most 55% of the table (`available_px`) so the numbers stay on screen; a name cut by
// that shows in full in its tooltip. `font_px` is the font's size.
float name_column_width(float longest_name_px, float available_px, float font_px);

}  // namespace flopline::viewer
