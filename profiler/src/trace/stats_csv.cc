#include "flopline/trace/stats_csv.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace flopline::trace {

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

void append_stats_csv_row(std::string& out, const StatsRow& r) {
  out += csv_field(r.name);
  for (std::int64_t v : {static_cast<std::int64_t>(r.count), r.total_ns, r.avg_ns, r.median_ns,
                         r.min_ns, r.max_ns, r.std_ns}) {
    out += ',';
    out += std::to_string(v);
  }
  out += ',';
  if (std::isfinite(r.pct)) append_stats_number(out, r.pct);
  for (const std::optional<double>* v : {&r.flops, &r.bytes, &r.tflops, &r.gbps, &r.pct_peak}) {
    out += ',';
    if (*v && std::isfinite(**v)) append_stats_number(out, **v);
  }
  out += ',';
  out += csv_field(r.precision);
  out += ',';
  out += csv_field(r.flops_source);
  // Operator times: empty for rows that are not operators owning GPU work.
  for (const std::optional<TimeNs>* v :
       {&r.busy_ns, &r.self_ns, &r.device_total_ns, &r.extent_ns, &r.cpu_ns}) {
    out += ',';
    if (*v) out += std::to_string(**v);
  }
  for (const std::optional<double>* v :
       {&r.intensity, &r.counted_flops, &r.declared_vs_counted_pct}) {
    out += ',';
    if (*v && std::isfinite(**v)) append_stats_number(out, **v);
  }
}

}  // namespace flopline::trace
