#include "flopline/trace/stats_csv.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace flopline::trace {

std::string stats_csv_header(std::span<const StatsColumn> columns) {
  std::string s;
  for (const StatsColumn* c : columns_for(kStatsMachine, columns)) {
    if (!s.empty()) s += ',';
    s += c->id;
  }
  return s;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  o += '"';
  return o;
}

void append_stats_number(std::string& out, double v) {
  char buf[64];
  const double mag = std::fabs(v);
  const bool plain = v == 0 || (mag >= 1e-5 && mag < 1e21);
  const auto r = std::to_chars(buf, buf + sizeof buf, v,
                               plain ? std::chars_format::fixed : std::chars_format::general);
  out.append(buf, r.ptr);
}

void append_stats_csv_cell(std::string& out, const StatsValue& v) {
  switch (v.kind) {
    case StatsValue::Kind::kUnknown:
      return;
    case StatsValue::Kind::kInt:
      out += std::to_string(v.i);
      return;
    case StatsValue::Kind::kNumber:
      if (std::isfinite(v.d)) append_stats_number(out, v.d);
      return;
    case StatsValue::Kind::kText:
      out += csv_field(v.text);
      return;
  }
}

void append_stats_csv_row(std::string& out, const StatsRow& r,
                          std::span<const StatsColumn> columns) {
  bool first = true;
  for (const StatsColumn* c : columns_for(kStatsMachine, columns)) {
    if (!first) out += ',';
    first = false;
    append_stats_csv_cell(out, c->value(r));
  }
}

}  // namespace flopline::trace
