// The FLOP/s table's cells as text, and widths that follow its content (GL-free,
// unit-tested).
#pragma once

#include <string>

#include "core/op_table.h"

namespace flopline::viewer {

// The Name column's width: as wide as the longest name shown (`longest_name_px`, text
// plus padding), at least 12 characters so short names leave room to click, and at
// most 55% of the table (`available_px`) so the numbers stay on screen; a name cut by
// that shows in full in its tooltip. `font_px` is the font's size.
float name_column_width(float longest_name_px, float available_px, float font_px);

// A cell as the table shows it: durations with units, FLOPs and bytes with SI prefixes,
// rates with 3 significant digits, "-" where the value is unknown.
std::string op_cell_text(const OpRow& row, OpColumn column);

}  // namespace flopline::viewer
