// The CSV of stats rows that `flopline stats --csv` writes and flopline-view's table
// exports (docs/STATS.md): one format, so both give the same bytes for the same row.
// The columns are stats_schema.h's machine columns, in their order.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "flopline/trace/analysis.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::trace {

// The header's columns, in row order, without the newline.
std::string stats_csv_header(std::span<const StatsColumn> columns = stats_columns());

// RFC 4180 field: quoted (quotes doubled) only when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view s);

// A computed number in its shortest round-trip digits, so a reader gets back exactly
// the double: plain notation for the magnitudes FLOP and byte counts and rates have
// (3000000000, not 3e+09), exponents only outside them.
void append_stats_number(std::string& out, double v);

// One cell: integers as they are, numbers as append_stats_number, text as csv_field;
// unknown and non-finite values are empty.
void append_stats_csv_cell(std::string& out, const StatsValue& v);

// One row's cells in stats_csv_header()'s order, without the newline.
void append_stats_csv_row(std::string& out, const StatsRow& row,
                          std::span<const StatsColumn> columns = stats_columns());

}  // namespace flopline::trace
