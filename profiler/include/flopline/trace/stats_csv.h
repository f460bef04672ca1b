// The CSV of stats rows that `flopline stats --csv` writes and flopline-view's table
// exports (docs/STATS.md): one format, so both give the same bytes for the same row.
#pragma once

#include <string>
#include <string_view>

#include "flopline/trace/analysis.h"

namespace flopline::trace {

// The header's columns, in row order, without the newline.
inline constexpr std::string_view kStatsCsvColumns =
    "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
    "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
    "intensity,counted_flops,declared_vs_counted_pct";

// RFC 4180 field: quoted (quotes doubled) only when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view s);

// A computed number in its shortest round-trip digits, so a reader gets back exactly
// the double: plain notation for the magnitudes FLOP and byte counts and rates have
// (3000000000, not 3e+09), exponents only outside them.
void append_stats_number(std::string& out, double v);

// One row's cells in kStatsCsvColumns' order, without the newline. Times are integer
// nanoseconds; unknown and non-finite values are empty cells.
void append_stats_csv_row(std::string& out, const StatsRow& row);

}  // namespace flopline::trace
