// The FLOP/s table's cells as text, and widths that follow its content (GL-free,
// unit-tested).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/op_table.h"

namespace flopline::viewer {

// The Name column's width: as wide as the longest name shown (`longest_name_px`, text
// plus padding), at least 12 characters so short names leave room to click, and at
// most 55% of the table (`available_px`) so the numbers stay on screen; a name cut by
// that shows in full in its tooltip. `font_px` is the font's size.
float name_column_width(float longest_name_px, float available_px, float font_px);

// The columns the table shows (stats_schema.h's viewer columns), the name first.
std::vector<const trace::StatsColumn*> viewer_columns(
    std::span<const trace::StatsColumn> all = trace::stats_columns());

// A cell as the table shows it: durations with units, FLOPs and bytes with SI prefixes,
// other numbers with the column's decimals, "-" where the value is unknown, "!" after
// a value the column warns about.
std::string op_cell_text(const OpRow& row, const trace::StatsColumn& column);

}  // namespace flopline::viewer
