// CSV and JSON output of `flopline stats`: fixed schemas for programs. Times are
// integer nanoseconds; other numbers are written in their shortest round-trip form,
// so a reader gets back exactly the double that was computed.
#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "flopline/trace/json_text.h"
#include "stats_output.h"

namespace flopline::cli {
namespace {

void append_i64(std::string& out, std::int64_t v) {
  out += std::to_string(v);
}

void append_real(std::string& out, double v) {
  // Shortest round-trip digits; plain notation for the magnitudes FLOP and byte
  // counts and rates have (3000000000, not 3e+09), exponents only outside them.
  char buf[64];
  const double mag = std::fabs(v);
  const bool plain = v == 0 || (mag >= 1e-5 && mag < 1e21);
  const auto r = std::to_chars(buf, buf + sizeof buf, v,
                               plain ? std::chars_format::fixed : std::chars_format::general);
  out.append(buf, r.ptr);
}

// Empty cell (CSV) or null (JSON) for unknown and non-finite values.
void append_opt(std::string& out, const std::optional<double>& v, std::string_view unknown) {
  if (v && std::isfinite(*v)) {
    append_real(out, *v);
  } else {
    out += unknown;
  }
}

void append_json_strings(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ',';
    trace::append_json_string(out, v[i]);
  }
  out += ']';
}

void append_json_opt_ns(std::string& out, const std::optional<trace::TimeNs>& v) {
  if (v) {
    append_i64(out, *v);
  } else {
    out += "null";
  }
}

}  // namespace

std::string_view group_by_name(trace::GroupBy by) {
  switch (by) {
    case trace::GroupBy::kName:
      return "name";
    case trace::GroupBy::kOperator:
      return "op";
    case trace::GroupBy::kCategory:
      return "category";
  }
  return "name";
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

namespace {

// The operator-time columns (unknown for rows that are not operators owning GPU work).
std::array<std::pair<const char*, const std::optional<trace::TimeNs>*>, 5> operator_times(
    const trace::StatsRow& r) {
  return {{{"busy_ns", &r.busy_ns},
           {"self_ns", &r.self_ns},
           {"device_total_ns", &r.device_total_ns},
           {"extent_ns", &r.extent_ns},
           {"cpu_ns", &r.cpu_ns}}};
}

}  // namespace

void write_stats_csv(const StatsReport& report, std::ostream& out) {
  std::string s =
      "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
      "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns\n";
  for (const trace::StatsRow& r : report.result.rows) {
    s += csv_field(r.name);
    for (std::int64_t v : {static_cast<std::int64_t>(r.count), r.total_ns, r.avg_ns, r.median_ns,
                           r.min_ns, r.max_ns, r.std_ns}) {
      s += ',';
      append_i64(s, v);
    }
    s += ',';
    append_real(s, r.pct);
    for (const auto* v : {&r.flops, &r.bytes, &r.tflops, &r.gbps, &r.pct_peak}) {
      s += ',';
      append_opt(s, *v, "");
    }
    s += ',';
    s += csv_field(r.precision);
    s += ',';
    s += csv_field(r.flops_source);
    for (const auto& [key, v] : operator_times(r)) {
      s += ',';
      if (*v) append_i64(s, **v);
    }
    s += '\n';
  }
  out << s;
}

void write_stats_json(const StatsReport& report, std::ostream& out) {
  const trace::StatsResult& res = report.result;
  std::string s = "{\"files\":";
  append_json_strings(s, report.files);
  s += ",\"group_by\":";
  trace::append_json_string(s, group_by_name(report.by));
  s += ",\"categories\":";
  append_json_strings(s, res.categories_used);
  s += ",\"all_categories\":";
  s += res.all_categories ? "true" : "false";
  s += ",\"range\":";
  if (report.range) {
    s += "{\"begin_ns\":";
    append_json_opt_ns(s, report.range->begin);
    s += ",\"end_ns\":";
    append_json_opt_ns(s, report.range->end);
    s += "}";
  } else {
    s += "null";
  }
  s += ",\"total_ns\":";
  append_i64(s, res.total_ns);
  s += ",\"slices\":";
  s += std::to_string(res.slices_considered);
  s += ",\"rows_total\":";
  s += std::to_string(report.rows_total);
  s += ",\"events_total\":";
  s += std::to_string(report.events_total);
  s += ",\"events_skipped\":";
  s += std::to_string(report.events_skipped);
  s += ",\"total_flops\":";
  append_opt(s, res.total_flops, "null");
  s += ",\"rows\":[";
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    const trace::StatsRow& r = res.rows[i];
    s += i > 0 ? ",\n{" : "\n{";
    s += "\"name\":";
    trace::append_json_string(s, r.name);
    s += ",\"count\":" + std::to_string(r.count);
    const std::pair<const char*, std::int64_t> ns[] = {
        {"total_ns", r.total_ns}, {"avg_ns", r.avg_ns}, {"median_ns", r.median_ns},
        {"min_ns", r.min_ns},     {"max_ns", r.max_ns}, {"std_ns", r.std_ns}};
    for (const auto& [key, v] : ns) {
      s += ",\"";
      s += key;
      s += "\":";
      append_i64(s, v);
    }
    s += ",\"pct\":";
    append_opt(s, r.pct, "null");
    const std::pair<const char*, const std::optional<double>*> opt[] = {{"flops", &r.flops},
                                                                        {"bytes", &r.bytes},
                                                                        {"tflops", &r.tflops},
                                                                        {"gbps", &r.gbps},
                                                                        {"pct_peak", &r.pct_peak}};
    for (const auto& [key, v] : opt) {
      s += ",\"";
      s += key;
      s += "\":";
      append_opt(s, *v, "null");
    }
    s += ",\"precision\":";
    trace::append_json_string(s, r.precision);
    s += ",\"flops_source\":";
    trace::append_json_string(s, r.flops_source);
    for (const auto& [key, v] : operator_times(r)) {
      s += ",\"";
      s += key;
      s += "\":";
      append_json_opt_ns(s, *v);
    }
    s += '}';
  }
  s += "]}\n";
  out << s;
}

}  // namespace flopline::cli
