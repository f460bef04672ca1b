// The columns of `flopline diff` and the viewer's diff window, written once: the CLI
// table, CSV, JSON and the window are renderers over this table (docs/DIFF.md). A field
// is either the row's (the change, the deltas) or each side's (calls, time...): a
// side's field is one entry and becomes two columns, A's then B's ("a_count" and
// "b_count", "A calls" and "B calls"), and JSON's "a" and "b" objects.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/stats_schema.h"
#include "flopline/trace/trace_diff.h"

namespace flopline::trace {

struct DiffField {
  std::string_view id;           // CSV header and JSON key; a side's: "a_" / "b_" + id
  std::string_view title;        // the viewer's header; a side's: "A " / "B " + title
  std::string_view table_title;  // the CLI table's header (plain numbers: "(ns)")
  StatsUnit unit;
  int decimals;  // fixed decimals where people see a plain number
  bool per_side;
  // The value of a row's field (!per_side), or of one side's row (per_side); a side
  // without the row has no value.
  StatsValue (*row_value)(const DiffRow& row) = nullptr;
  StatsValue (*side_value)(const StatsRow& side) = nullptr;
  // Shown to people (the CLI table and the viewer), at this position; CSV and JSON
  // show every field, in the table's order.
  bool people = true;
  int people_order = 0;
  // A change: shown with its sign (+800,000, +200.0).
  bool signed_change = false;
  // Ordered by size whatever its sign: the time a change moved.
  bool by_magnitude = false;
  // The row's name: the CLI table puts it last and shortens it, the viewer shows it whole.
  bool is_name = false;
};

enum class DiffSide : std::uint8_t { kRow, kA, kB };

// A field as one column: the row's, or one side's.
struct DiffColumn {
  std::string id;
  std::string title;
  std::string table_title;
  const DiffField* field = nullptr;
  DiffSide side = DiffSide::kRow;
  StatsValue value(const DiffRow& row) const;
};

// Every field, in the machines' order (new fields go last).
std::span<const DiffField> diff_fields();
// Every column, in the machines' order: the CSV's.
std::span<const DiffColumn> diff_columns();
// The columns people see (the CLI table, the viewer), in their order.
std::vector<const DiffColumn*> diff_people_columns();
// nullptr when no column has this id ("delta_ns", "a_total_ns").
const DiffColumn* find_diff_column(std::string_view id);
// The CSV header: the columns' ids, comma-separated, without the newline.
std::string diff_csv_header();
// One row's CSV cells (stats_csv.h's rules), without the newline.
std::string diff_csv_row(const DiffRow& row);

}  // namespace flopline::trace
