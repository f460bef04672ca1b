// The human-readable `flopline stats` table, laid out like nsys stats'
// cuda_gpu_kern_sum: right-aligned numbers, the name last.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "flopline/trace/name_text.h"
#include "stats_output.h"
#include "text_table.h"

namespace flopline::cli {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string opt_fixed(const std::optional<double>& v, int decimals, double scale = 1) {
  const auto shown = shown_value(v);
  return shown ? fixed(*shown / scale, decimals) : std::string("-");
}

bool shown(const std::optional<double>& v) {
  return shown_value(v).has_value();
}

// A cell of the table: ns and counts with thousands separators, FLOPs in GFLOP, bytes
// with a unit, other numbers with the column's decimals, "-" when unknown.
std::string table_cell(const trace::StatsColumn& c, const trace::StatsRow& r) {
  const trace::StatsValue v = c.value(r);
  if (!v.known()) return "-";
  std::string s;
  switch (v.kind) {
    case trace::StatsValue::Kind::kInt:
      s = with_thousands(v.i);
      break;
    case trace::StatsValue::Kind::kNumber:
      s = c.unit == trace::StatsUnit::kFlop   ? fixed(v.d / 1e9, c.decimals)
          : c.unit == trace::StatsUnit::kByte ? bytes_text(v.d)
                                              : fixed(v.d, c.decimals);
      break;
    case trace::StatsValue::Kind::kText:
      s = v.text;
      break;
    case trace::StatsValue::Kind::kUnknown:
      break;
  }
  if (c.warn != nullptr && c.warn(r)) s += "!";
  return s;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += sep;
    s += v[i];
  }
  return s;
}

std::string range_text(const RelativeRange& r) {
  auto ns = [](trace::TimeNs v) { return with_thousands(v) + " ns"; };
  return concat("[", r.begin ? ns(*r.begin) : std::string("start"), ", ",
                r.end ? ns(*r.end) : std::string("end"), ") after each file's first event");
}

}  // namespace

std::string with_thousands(std::int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64, v);
  const std::string digits(buf);
  const std::size_t sign = (digits[0] == '-') ? 1 : 0;
  std::string out = digits.substr(0, sign);
  const std::size_t n = digits.size() - sign;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[sign + i];
  }
  return out;
}

std::string bytes_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  std::size_t u = 0;
  while (u + 1 < std::size(kUnits) && bytes >= 999.5) {
    bytes /= 1000;
    ++u;
  }
  if (u == 0) return concat(fixed(bytes, 0), " B");
  return concat(fixed(bytes, bytes < 9.995 ? 2 : bytes < 99.95 ? 1 : 0), " ", kUnits[u]);
}

std::vector<std::string> table_names(const std::vector<trace::StatsRow>& rows,
                                     std::size_t max_bytes) {
  std::vector<std::string> shown;
  std::vector<std::string_view> full;
  shown.reserve(rows.size());
  full.reserve(rows.size());
  for (const trace::StatsRow& r : rows) {
    full.push_back(r.name);
    shown.push_back(shorten_name(r.name, max_bytes == 0 ? r.name.size() : max_bytes));
  }
  trace::disambiguate_names(full, shown);
  // The fragments that tell names apart come from the full names, control bytes and all.
  for (std::string& s : shown) s = trace::terminal_safe(s);
  return shown;
}

std::string shorten_name(std::string_view name, std::size_t max_bytes) {
  auto clean = [](std::string_view s) {
    std::string o(s);
    for (char& c : o) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) c = '?';  // a newline or NUL would break the table
    }
    return o;
  };
  if (name.size() <= max_bytes || max_bytes < 8) return clean(name);
  auto is_cont = [&](std::size_t i) {
    return i < name.size() && (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80;
  };
  // Kernel names differ at both ends (namespace and template arguments at the start,
  // tile sizes at the end), so keep both and drop the middle.
  const std::size_t keep = max_bytes - 3;
  std::size_t head = keep * 2 / 3;
  std::size_t tail_start = name.size() - (keep - head);
  while (head > 0 && is_cont(head)) --head;  // do not cut a UTF-8 sequence
  while (tail_start < name.size() && is_cont(tail_start)) ++tail_start;
  return concat(clean(name.substr(0, head)), "...", clean(name.substr(tail_start)));
}

namespace {

// NCCL's calls by collective and size: count, time and nccl-tests' bandwidths.
void write_collectives(const std::vector<trace::CollectiveRow>& rows, std::ostream& out) {
  out << "\nCollectives (size from NCCL's NVTX ranges; algbw and busbw by nccl-tests' formulas "
         "over "
         "the mean\nkernel time, which includes waiting for the other ranks; docs/STATS.md):\n";
  std::vector<std::vector<std::string>> cells;
  for (const trace::CollectiveRow& r : rows) {
    const std::int64_t mean = r.kernels > 0 ? r.total_ns / static_cast<std::int64_t>(r.kernels) : 0;
    cells.push_back({trace::to_string(r.collective),
                     bytes_text(static_cast<double>(r.message_bytes)),
                     r.ranks ? std::to_string(*r.ranks) : std::string("-"),
                     with_thousands(static_cast<std::int64_t>(r.kernels)),
                     with_thousands(r.total_ns), with_thousands(mean),
                     opt_fixed(r.bandwidth.algbw_gbps, 1), opt_fixed(r.bandwidth.busbw_gbps, 1)});
  }
  write_text_table({{"Collective", true},
                    {"Message"},
                    {"Ranks"},
                    {"Kernels"},
                    {"Total (ns)"},
                    {"Mean (ns)"},
                    {"algbw (GB/s)"},
                    {"busbw (GB/s)"},
                    {""}},  // no free text: every figure aligned
                   cells, out);
  if (std::any_of(rows.begin(), rows.end(), [](const trace::CollectiveRow& r) { return !r.ranks; }))
    out << "Ranks \"-\": no WORLD_SIZE in the capture; busbw (and algbw of AllGather, "
           "ReduceScatter,\n"
           "AlltoAll) need the communicator's rank count\n";
}

void write_collective_waits(const trace::CollectiveWaits& w, std::ostream& out) {
  out << "\nCollective waits (NCCL kernels matched across ranks by communicator and order; "
         "a rank\nwaits from its kernel's start to the last rank's; docs/STATS.md):\n";
  const std::vector<std::string> headers = {
      "Rank", "Matched", "Kernel (ns)", "Waited (ns)", "Waited (%)", "Last to arrive", "File"};
  std::vector<std::vector<std::string>> cells;
  for (const trace::RankWaits& r : w.ranks) {
    const std::optional<double> pct =
        r.kernel_ns > 0 ? std::optional<double>(100.0 * static_cast<double>(r.wait_ns) /
                                                static_cast<double>(r.kernel_ns))
                        : std::nullopt;
    cells.push_back({r.rank ? std::to_string(*r.rank) : std::string("-"),
                     with_thousands(static_cast<std::int64_t>(r.matched)),
                     with_thousands(r.kernel_ns), with_thousands(r.wait_ns), opt_fixed(pct, 1),
                     with_thousands(static_cast<std::int64_t>(r.last_arrivals)),
                     trace::terminal_safe(r.file)});
  }
  std::vector<TextColumn> columns;
  for (const std::string& h : headers) columns.push_back({h});
  write_text_table(columns, cells, out);
  if (w.waited_for) {
    const trace::RankWaits& r = w.ranks[*w.waited_for];
    out << "Last to arrive most often: "
        << (r.rank ? concat("rank ", std::to_string(*r.rank)) : trace::terminal_safe(r.file))
        << " (" << r.last_arrivals << " of " << w.collectives << " collectives)\n";
  }
  if (w.unmatched > 0) {
    out << w.unmatched
        << " NCCL kernels not matched (no communicator, on one rank only, a shorter trace, "
           "or a different collective at the same place in the order)\n";
  }
  std::uint64_t suspect = 0;
  for (const trace::RankWaits& r : w.ranks) suspect += r.clock_suspect;
  if (suspect > 0) {
    out << suspect
        << " waits were longer than their kernel and cut to it: the ranks' clocks disagree "
           "(traces from different hosts)\n";
  }
}

}  // namespace

void write_stats_table(const StatsReport& report, std::ostream& out) {
  const trace::StatsResult& res = report.result;
  out << (report.files.size() == 1 ? "File:       " : "Files:      ")
      << trace::terminal_safe(join(report.files, ", ")) << "\n";
  if (!report.files_left_out.empty()) {
    out << "Left out:   " << trace::terminal_safe(join(report.files_left_out, ", "))
        << " (not readable as traces)\n";
  }
  out << "Grouped by: " << group_by_name(report.by) << "; categories: "
      << (res.all_categories ? std::string("all") : join(res.categories_used, ", ")) << "\n";
  bool busy = false;
  for (const trace::StatsRow& r : res.rows) busy = busy || r.busy_ns.has_value();
  if (busy) {
    out << "Time:       each operator's GPU busy time (the union of the kernels, copies and sets "
           "it\n"
           "            launched, nested operators' included); Self: launched directly; Extent:\n"
           "            first start to last end (docs/STATS.md)\n";
  }
  bool window = false;
  for (const trace::StatsRow& r : res.rows) window = window || r.window_busy_ns.has_value();
  if (window) {
    out << "Window:     top-level ranges only: the GPU busy time of all the work their process\n"
           "            launched, from any thread, while they were open (a step's backward\n"
           "            kernels from autograd's thread included)\n";
  }
  if (!report.peak_sources.empty())
    out << "Peaks:      " << join(report.peak_sources, "; ") << "\n";
  if (report.counted.any_counted())
    out << "Counters:   " << trace::counted_coverage_line(report.counted) << "\n";
  if (report.range) out << "Range:      " << range_text(*report.range) << "\n";
  if (!report.steps.empty()) {
    out << "Steps:      " << report.steps_kept << " matching '"
        << trace::terminal_safe(report.steps) << "'";
    if (report.skip_first > 0) out << " after the first " << report.skip_first;
    out << " (only what starts inside their span)\n";
  }
  out << "\n";

  // Columns without a value in any row are left out: most traces from other tools
  // carry no counts, and a wall of "-" hides the columns that matter. The footer says
  // why the ones that matter are empty.
  std::vector<const trace::StatsColumn*> cols;
  std::vector<std::string> no_counts;
  bool no_peak = false;
  for (const trace::StatsColumn* c : trace::columns_for(trace::kStatsTable, report.columns)) {
    if (c->is_name) continue;  // last, cut to the name width
    bool any = false;
    for (const trace::StatsRow& r : res.rows) any = any || c->value(r).known();
    if (any) {
      cols.push_back(c);
    } else if (c->empty_reason == trace::EmptyReason::kCounts) {
      no_counts.emplace_back(c->table_title);
    } else if (c->empty_reason == trace::EmptyReason::kPeak) {
      no_peak = true;
    }
  }
  const std::vector<std::string> names = table_names(res.rows, report.name_width);
  // Cells first, then widths: every column is as wide as its widest cell or header.
  std::vector<std::vector<std::string>> cells(res.rows.size());
  std::vector<std::size_t> width(cols.size());
  for (std::size_t j = 0; j < cols.size(); ++j) width[j] = cols[j]->table_title.size();
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    for (std::size_t j = 0; j < cols.size(); ++j) {
      cells[i].push_back(table_cell(*cols[j], res.rows[i]));
      width[j] = std::max(width[j], cells[i][j].size());
    }
  }
  auto pad = [&](const std::string& s, std::size_t w) {
    return std::string(w - s.size(), ' ') + s;
  };
  std::string line, rule;
  for (std::size_t j = 0; j < cols.size(); ++j) {
    line += concat(" ", pad(std::string(cols[j]->table_title), width[j]), " ");
    rule += concat(" ", pad(std::string(cols[j]->table_title.size(), '-'), width[j]), " ");
  }
  std::string_view name_title = "Name";
  for (const trace::StatsColumn& c : report.columns) {
    if (c.is_name) name_title = c.table_title;
  }
  out << line << " " << name_title << "\n"
      << rule << " " << std::string(name_title.size(), '-') << "\n";
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    std::string l;
    for (std::size_t j = 0; j < cols.size(); ++j) l += concat(" ", pad(cells[i][j], width[j]), " ");
    out << l << " " << names[i] << "\n";
  }

  out << "\nTotal: " << with_thousands(res.total_ns) << " ns in "
      << with_thousands(static_cast<std::int64_t>(res.slices_considered)) << " slices, "
      << report.rows_total << (report.rows_total == 1 ? " row" : " rows");
  if (res.rows.size() < report.rows_total) out << " (top " << res.rows.size() << " shown)";
  if (shown(res.total_flops)) {
    out << "; " << fixed(*res.total_flops / 1e9, 3) << " GFLOP"
        << (busy ? " (nested operators' FLOPs counted once)" : "");
  }
  out << "\n";
  if (!report.collectives.empty()) write_collectives(report.collectives, out);
  if (report.collective_waits) write_collective_waits(*report.collective_waits, out);
  // Say why each empty column is empty: a missing count, a missing precision and a
  // missing peak are different fixes for the user.
  bool any_flops = false, any_precision = false;
  for (const trace::StatsRow& r : res.rows) {
    any_flops = any_flops || r.flops.has_value();
    any_precision = any_precision || !r.precision.empty();
  }
  if (!no_counts.empty()) {
    out << "No values for: " << join(no_counts, ", ")
        << " (no FLOP/byte counts on these slices: record with `flopline run --counters`, or "
           "declare them, docs/NVTX.md; --csv and --json keep the columns)\n";
  }
  for (const trace::StatsRow& r : res.rows) {
    if (!trace::flops_disagree(r)) continue;
    out << "Declared FLOPs differ from the counters' by " << fixed(*r.declared_vs_counted_pct, 1)
        << "% (more than " << fixed(trace::kFlopsDisagreementPct, 0) << "%): " << r.name
        << " declares " << fixed(*r.counted_flops * (1 + *r.declared_vs_counted_pct / 100) / 1e9, 3)
        << " GFLOP, the counters measured " << fixed(*r.counted_flops / 1e9, 3) << " GFLOP\n";
  }
  if (no_peak && (any_flops || !no_counts.empty())) {
    std::string why;
    if (!report.has_device_peaks) {
      why = "the trace carries no device peaks";
    } else if (any_flops && !any_precision) {
      why =
          "needs each operator's precision: an NVTX suffix [precision=tf32], a \"precision\" "
          "arg, or torch.profiler's Input type; docs/STATS.md";
    } else if (any_flops) {
      why = "the device has no peak for these precisions";
    } else {
      why = "needs FLOP or byte counts";
    }
    out << "No values for: % peak (" << why << ")\n";
  }
  if (report.events_skipped > 0) {
    out << "Reader skipped " << with_thousands(static_cast<std::int64_t>(report.events_skipped))
        << " of " << with_thousands(static_cast<std::int64_t>(report.events_total))
        << " events (reasons on stderr)\n";
  }
  if (report.text_bytes_unread > 0) {
    out << "Reader could not read "
        << with_thousands(static_cast<std::int64_t>(report.text_bytes_unread)) << " of "
        << with_thousands(static_cast<std::int64_t>(report.text_bytes))
        << " bytes of text, after syntax errors or a cut-off end (where: on stderr)\n";
  }
}

}  // namespace flopline::cli
