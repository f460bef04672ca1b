// Aligned text tables for the command line's reports (stats' collectives and waits, the
// time breakdown, diff): one layout, so every report reads the same. Each column is as
// wide as its widest cell; cells are right-aligned (numbers) unless their column says
// left; the last column is free text (a name or a file) printed as it is.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace flopline::cli {

struct TextColumn {
  std::string header;
  bool left = false;  // left-aligned (a word such as a change or a collective)
};

// Writes the header line, then one line per row: " CELL " per column, then " LAST".
// Rows shorter than the columns are padded with empty cells.
void write_text_table(const std::vector<TextColumn>& columns,
                      const std::vector<std::vector<std::string>>& rows, std::ostream& out);

}  // namespace flopline::cli
