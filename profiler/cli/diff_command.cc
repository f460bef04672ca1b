#include "diff_command.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli_parse.h"
#include "flopline/trace/device_peaks.h"
#include "flopline/trace/diff_schema.h"
#include "flopline/trace/kernel_names.h"
#include "flopline/trace/name_text.h"
#include "flopline/trace/operator_paths.h"
#include "flopline/trace/stats_schema.h"
#include "flopline/trace/trace_diff.h"
#include "flopline/trace/trace_paths.h"
#include "output_check.h"
#include "stats_command.h"
#include "stats_output.h"
#include "text_table.h"
#include "trace_loading.h"

namespace flopline::cli {
namespace {

constexpr OptionSpec kDiffOptions[] = {
    {"--by", true},
    {"--top", true},
    {"--csv", false},
    {"--json", false},
    {"--fail-if-slower", true},
    {"--fail-if-row-slower", true},
    {"--names", true},
    {"--help", false, "-h"},
};

struct DiffOptions {
  std::string a, b;
  trace::GroupBy by = trace::GroupBy::kName;
  bool by_path = false;  // --by path: operators by the names of those enclosing them
  std::optional<std::uint64_t> top;
  StatsFormat format = StatsFormat::kTable;
  std::optional<double> fail_if_slower;      // % the total may grow
  std::optional<double> fail_if_row_slower;  // % any row of at least 1% of A may grow
  bool base_names = false;                   // --names base
  bool help = false;
};

Parsed<double> parse_percent(std::string_view text, std::string_view option) {
  std::string s(text);
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) {
    return Parsed<double>::fail(
        concat(option, " '", text, "' is not a percentage (a number >= 0, like 5 or 2.5%)"));
  }
  return {v, {}};
}

Parsed<DiffOptions> parse_diff_args(std::span<const std::string> args) {
  using P = Parsed<DiffOptions>;
  DiffOptions o;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      o.help = true;
      return P{std::move(o), {}};
    }
  }
  auto split = split_args(args, kDiffOptions);
  if (!split.ok()) return P::fail(split.error);
  bool csv = false, json = false;
  for (const auto& [name, value] : split.value->options) {
    if (name == "--by") {
      // The stats schema's words for kernels by name and operators (aliases included),
      // and diff's own "path"; the stats groupings a diff does not match by are refused.
      const trace::GroupingMatch g = trace::find_stats_grouping(value);
      if (value == "path") {
        o.by = trace::GroupBy::kOperator;
        o.by_path = true;
      } else if (g.grouping != nullptr && (g.grouping->by == trace::GroupBy::kName ||
                                           g.grouping->by == trace::GroupBy::kOperator)) {
        o.by = g.grouping->by;
      } else {
        return P::fail(concat("--by '", trace::terminal_safe(value),
                              "' is not a grouping flopline diff matches by; use name, op or "
                              "path"));
      }
    } else if (name == "--top") {
      auto n = parse_positive_count(value, "--top");
      if (!n.ok()) return P::fail(n.error);
      o.top = n.value;
    } else if (name == "--fail-if-slower" || name == "--fail-if-row-slower") {
      auto p = parse_percent(value, name);
      if (!p.ok()) return P::fail(p.error);
      (name == "--fail-if-slower" ? o.fail_if_slower : o.fail_if_row_slower) = p.value;
    } else if (name == "--names") {
      if (value != "full" && value != "base")
        return P::fail(concat("--names '", value, "' is not a naming; use full or base"));
      o.base_names = value == "base";
    } else if (name == "--csv") {
      csv = true;
    } else if (name == "--json") {
      json = true;
    }
  }
  if (csv && json) return P::fail("--csv and --json cannot be combined");
  o.format = csv ? StatsFormat::kCsv : json ? StatsFormat::kJson : StatsFormat::kTable;
  auto& pos = split.value->positional;
  if (pos.size() != 2) {
    return P::fail(concat("two runs to compare are needed (files or run directories), got ",
                          std::to_string(pos.size())));
  }
  o.a = pos[0];
  o.b = pos[1];
  return P{std::move(o), {}};
}

struct Side {
  std::string given;
  std::vector<std::string> files;
  trace::StatsResult result;
};

// One side's rows: every trace of the file or directory added together.
std::optional<Side> summarize(const std::string& path, trace::GroupBy by, bool by_path,
                              bool base_names, std::ostream& err) {
  std::string dir_error;
  const trace::TraceFiles found = trace::find_trace_files({path}, &dir_error);
  if (found.paths.empty()) {
    err << "flopline: " << dir_error << "\n";
    return std::nullopt;
  }
  for (const std::string& note : found.notes)
    err << "flopline: " << trace::terminal_safe(note) << "\n";
  Side side;
  side.given = path;
  trace::StatsAccumulator acc(by);
  trace::OperatorPathRows paths;
  const bool ok =
      for_each_trace(found.paths, err, found.from_directory, nullptr, [&](LoadedTrace& lt) {
        trace::fill_missing_peaks(*lt.trace);
        if (base_names) trace::use_kernel_base_names(*lt.trace);
        side.files.push_back(lt.path);
        if (by_path) {
          paths.add(*lt.trace);
          return;
        }
        trace::StatsQuery q;
        q.by = by;
        // Kernels and copies by name; operators by the trace's own default categories.
        if (by == trace::GroupBy::kName) q.categories = {"kernel", "gpu_memcpy", "gpu_memset"};
        acc.add(*lt.trace, q);
      });
  if (!ok) return std::nullopt;
  if (by_path) {
    side.result.rows = paths.finish();
    for (const trace::StatsRow& r : side.result.rows)
      side.result.total_ns = trace::add_saturating(side.result.total_ns, r.total_ns);
  } else {
    side.result = acc.finish();
  }
  return side;
}

std::string signed_thousands(std::int64_t v) {
  return concat(v > 0 ? "+" : "", with_thousands(v));
}

std::string opt_text(const std::optional<double>& v, int decimals, bool sign = false) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, *v);
  return buf;
}

// A cell as the table writes it: plain numbers with thousands separators, changes with
// their sign, "-" for what a row or side does not have; names shortened.
std::string table_cell(const trace::DiffColumn& c, const trace::DiffRow& d) {
  if (c.field->is_name) return shorten_name(d.name, 90);
  const trace::StatsValue v = c.value(d);
  if (!v.known()) return "-";
  switch (v.kind) {
    case trace::StatsValue::Kind::kText:
      return std::string(v.text);
    case trace::StatsValue::Kind::kInt:
      return c.field->signed_change ? signed_thousands(v.i) : with_thousands(v.i);
    case trace::StatsValue::Kind::kNumber:
      return opt_text(v.d, c.field->decimals, c.field->signed_change);
    case trace::StatsValue::Kind::kUnknown:
      break;
  }
  return "-";
}

void write_table(const Side& a, const Side& b, const std::vector<trace::DiffRow>& rows,
                 std::size_t total_rows, std::string_view grouping, std::ostream& out) {
  out << "A: " << trace::terminal_safe(a.given) << " (" << a.files.size() << " file"
      << (a.files.size() == 1 ? "" : "s") << ")\n"
      << "B: " << trace::terminal_safe(b.given) << " (" << b.files.size() << " file"
      << (b.files.size() == 1 ? "" : "s") << ")\n"
      << (grouping == "name"   ? "Kernels, copies and sets by name"
          : grouping == "path" ? "Operators by name path"
                               : "Operators by name")
      << "; other work: FLOPs per call beyond 1%; another speed: time per call beyond 2%\n\n";
  const std::vector<const trace::DiffColumn*> shown = trace::diff_people_columns();
  std::vector<TextColumn> columns;
  for (const trace::DiffColumn* c : shown)
    columns.push_back({c->table_title, c->field->unit == trace::StatsUnit::kText});
  std::vector<std::vector<std::string>> cells;
  for (const trace::DiffRow& d : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (const trace::DiffColumn* c : shown) line.push_back(table_cell(*c, d));
  }
  write_text_table(columns, cells, out);
  const double ta = static_cast<double>(a.result.total_ns);
  const double tb = static_cast<double>(b.result.total_ns);
  out << "\nTotal: A " << with_thousands(a.result.total_ns) << " ns, B "
      << with_thousands(b.result.total_ns) << " ns ("
      << opt_text(ta > 0 ? std::optional<double>(100 * (tb - ta) / ta) : std::nullopt, 1, true)
      << "%); " << total_rows << " names";
  if (rows.size() < total_rows) out << " (top " << rows.size() << " shown)";
  out << "\n";
}

void write_csv(const std::vector<trace::DiffRow>& rows, std::ostream& out) {
  std::string s = trace::diff_csv_header();
  s += '\n';
  for (const trace::DiffRow& d : rows) {
    s += trace::diff_csv_row(d);
    s += '\n';
  }
  out << s;
}

// A cell as JSON writes it: numbers as they are computed, null when unknown.
nlohmann::ordered_json json_value(const trace::StatsValue& v) {
  switch (v.kind) {
    case trace::StatsValue::Kind::kUnknown:
      return nullptr;
    case trace::StatsValue::Kind::kInt:
      return v.i;
    case trace::StatsValue::Kind::kNumber:
      return std::isfinite(v.d) ? nlohmann::ordered_json(v.d) : nlohmann::ordered_json(nullptr);
    case trace::StatsValue::Kind::kText:
      return std::string(v.text);
  }
  return nullptr;
}

void write_json(const Side& a, const Side& b, const std::vector<trace::DiffRow>& rows,
                std::size_t total_rows, std::string_view grouping,
                const std::vector<std::string>& exceeded, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  auto side = [&](const Side& s) {
    return Json{{"given", s.given}, {"files", s.files}, {"total_ns", s.result.total_ns}};
  };
  // The row's fields, then each side's as an object ("a": {"count": ..}), null for a
  // side without the row.
  Json list = Json::array();
  for (const trace::DiffRow& d : rows) {
    Json row = Json::object();
    Json sides[2] = {d.a ? Json::object() : Json(nullptr), d.b ? Json::object() : Json(nullptr)};
    for (const trace::DiffColumn& c : trace::diff_columns()) {
      const std::string key(c.field->id);
      if (c.side == trace::DiffSide::kRow) {
        row[key] = json_value(c.value(d));
      } else if (Json& s = sides[c.side == trace::DiffSide::kA ? 0 : 1]; !s.is_null()) {
        s[key] = json_value(c.value(d));
      }
    }
    row["a"] = std::move(sides[0]);
    row["b"] = std::move(sides[1]);
    list.push_back(std::move(row));
  }
  Json doc{{"a", side(a)},
           {"b", side(b)},
           {"group_by", grouping},
           {"rows_total", total_rows},
           {"rows", std::move(list)},
           {"thresholds_exceeded", exceeded}};
  out << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace

std::string diff_usage() {
  return "usage: flopline diff A B [options]\n"
         "\n"
         "What changed from run A to run B (each a trace file or a run directory, whose\n"
         "files are added together): kernels, copies and sets matched by name (or\n"
         "operators, --by op), each change classified (new, removed, precision changed,\n"
         "more or less work per call, more or fewer calls, slower, faster, same) and\n"
         "sorted by its effect on time.\n"
         "\n"
         "options:\n"
         "  --by name|op|path       match kernels by name (default), operators by name, or\n"
         "                          operators by name path (enclosing operators' names\n"
         "                          and their own: 'step / forward / aten::linear')\n"
         "  --names full|base       kernels by full name (default) or base name (no\n"
         "                          namespaces, templates or parameters; nsys' :base)\n"
         "  --top N                 show only the N rows with the largest time change\n"
         "  --fail-if-slower P      exit 3 when B's total time exceeds A's by more than P%\n"
         "  --fail-if-row-slower P  exit 3 when a row holding at least 1% of A's time grew\n"
         "                          by more than P% (new rows count from zero)\n"
         "  --csv                   write CSV (see docs/DIFF.md)\n"
         "  --json                  write JSON (see docs/DIFF.md)\n"
         "  -h, --help              show this help\n"
         "\n"
         "Exit status: 0 ok, 1 unreadable input, 2 bad command line, 3 a --fail-if\n"
         "threshold was exceeded (the report is written first).\n";
}

int run_diff_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto parsed = parse_diff_args(args);
  if (!parsed.ok()) {
    err << usage_error("diff", parsed.error);
    return kExitUsage;
  }
  const DiffOptions& opt = *parsed.value;
  if (opt.help) {
    out << diff_usage();
    return kExitOk;
  }
  const std::optional<Side> a = summarize(opt.a, opt.by, opt.by_path, opt.base_names, err);
  if (!a) return kExitFailure;
  const std::optional<Side> b = summarize(opt.b, opt.by, opt.by_path, opt.base_names, err);
  if (!b) return kExitFailure;
  if (a->result.rows.empty() && b->result.rows.empty()) {
    err << "flopline diff: neither run has "
        << (opt.by == trace::GroupBy::kName ? "kernels, copies or sets" : "operators") << "\n";
    return kExitFailure;
  }
  std::vector<trace::DiffRow> rows = trace::diff_rows(a->result.rows, b->result.rows);
  // The thresholds, over every row (--top only shortens the report).
  std::vector<std::string> exceeded;
  const double ta = static_cast<double>(a->result.total_ns);
  const double tb = static_cast<double>(b->result.total_ns);
  if (opt.fail_if_slower && ta > 0 && 100 * (tb - ta) / ta > *opt.fail_if_slower) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "total time grew by %.1f%% (more than %g%%)",
                  100 * (tb - ta) / ta, *opt.fail_if_slower);
    exceeded.emplace_back(buf);
  }
  if (opt.fail_if_row_slower) {
    for (const trace::DiffRow& d : rows) {
      const double row_a = d.a ? static_cast<double>(d.a->total_ns) : 0;
      const double row_b = d.b ? static_cast<double>(d.b->total_ns) : 0;
      const bool big = row_a >= 0.01 * ta || (!d.a && row_b >= 0.01 * ta);
      if (!big || row_b <= row_a) continue;
      const double grew = row_a > 0 ? 100 * (row_b - row_a) / row_a : INFINITY;
      if (grew <= *opt.fail_if_row_slower) continue;
      char buf[96];
      if (std::isfinite(grew)) {
        std::snprintf(buf, sizeof buf, "grew by %.1f%% (more than %g%%)", grew,
                      *opt.fail_if_row_slower);
      } else {
        std::snprintf(buf, sizeof buf, "is new, %.1f%% of A's time", 100 * row_b / ta);
      }
      exceeded.push_back(concat(shorten_name(d.name, 90), " ", buf));
    }
  }
  const std::size_t total_rows = rows.size();
  if (opt.top && *opt.top < rows.size()) rows.resize(static_cast<std::size_t>(*opt.top));
  start_output();
  switch (opt.format) {
    case StatsFormat::kTable:
      write_table(*a, *b, rows, total_rows,
                  opt.by_path                       ? "path"
                  : opt.by == trace::GroupBy::kName ? "name"
                                                    : "op",
                  out);
      for (const std::string& e : exceeded) out << "Threshold exceeded: " << e << "\n";
      break;
    case StatsFormat::kCsv:
      write_csv(rows, out);
      break;
    case StatsFormat::kJson:
      write_json(*a, *b, rows, total_rows,
                 opt.by_path                       ? "path"
                 : opt.by == trace::GroupBy::kName ? "name"
                                                   : "op",
                 exceeded, out);
      break;
  }
  if (!output_complete(out, err, "diff")) return kExitFailure;
  if (!exceeded.empty()) {
    if (opt.format != StatsFormat::kTable) {
      for (const std::string& e : exceeded)
        err << "flopline diff: threshold exceeded: " << trace::terminal_safe(e) << "\n";
    }
    return kExitThresholdExceeded;
  }
  return kExitOk;
}

}  // namespace flopline::cli
