#include "text_table.h"

#include <algorithm>

namespace flopline::cli {

void write_text_table(const std::vector<TextColumn>& columns,
                      const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  if (columns.empty()) return;
  const std::size_t last = columns.size() - 1;
  std::vector<std::size_t> width(columns.size());
  for (std::size_t j = 0; j < last; ++j) width[j] = columns[j].header.size();
  for (const auto& row : rows) {
    for (std::size_t j = 0; j < last && j < row.size(); ++j)
      width[j] = std::max(width[j], row[j].size());
  }
  auto line = [&](auto cell) {
    std::string l;
    for (std::size_t j = 0; j < last; ++j) {
      const std::string& c = cell(j);
      const std::string gap(width[j] - c.size(), ' ');
      l += " ";
      l += columns[j].left ? c + gap : gap + c;
      l += " ";
    }
    l += " ";
    l += cell(last);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out << l << "\n";
  };
  line([&](std::size_t j) -> const std::string& { return columns[j].header; });
  const std::string empty;
  for (const auto& row : rows) {
    line([&](std::size_t j) -> const std::string& { return j < row.size() ? row[j] : empty; });
  }
}

}  // namespace flopline::cli
