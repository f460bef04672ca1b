// CSV and JSON output of `flopline stats`: fixed schemas for programs. Times are
// integer nanoseconds; other numbers are written in their shortest round-trip form,
// so a reader gets back exactly the double that was computed.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "flopline/trace/stats_csv.h"
#include "stats_output.h"

namespace flopline::cli {
namespace {

// A JSON number as the CSV writes it: integral values without a fraction (75, not 75.0),
// others in their shortest round-trip form; null when not shown.
nlohmann::ordered_json json_number(const std::optional<double>& v) {
  const auto shown = shown_value(v);
  if (!shown) return nullptr;
  constexpr double kExactInt = 9007199254740992.0;  // 2^53
  if (std::fabs(*shown) < kExactInt && std::trunc(*shown) == *shown) {
    return static_cast<std::int64_t>(*shown);
  }
  return *shown;
}

// A time in ns, or null when there is none.
nlohmann::ordered_json json_ns(const std::optional<trace::TimeNs>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// A cell as JSON writes it: unknown values are null, text is a string ("" included).
nlohmann::ordered_json json_value(const trace::StatsValue& v) {
  switch (v.kind) {
    case trace::StatsValue::Kind::kUnknown:
      return nullptr;
    case trace::StatsValue::Kind::kInt:
      return v.i;
    case trace::StatsValue::Kind::kNumber:
      return json_number(v.d);
    case trace::StatsValue::Kind::kText:
      return std::string(v.text);
  }
  return nullptr;
}

}  // namespace

std::optional<double> shown_value(const std::optional<double>& v) {
  if (v && std::isfinite(*v)) return v;
  return std::nullopt;
}

std::string_view group_by_name(trace::GroupBy by) {
  return trace::stats_grouping(by).name;
}

void write_stats_csv(const StatsReport& report, std::ostream& out) {
  std::string s = trace::stats_csv_header(report.columns);
  s += '\n';
  for (const trace::StatsRow& r : report.result.rows) {
    trace::append_stats_csv_row(s, r, report.columns);
    s += '\n';
  }
  out << s;
}

namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order

Json json_rows(const StatsReport& report) {
  Json rows = Json::array();
  const std::vector<const trace::StatsColumn*> machine =
      trace::columns_for(trace::kStatsMachine, report.columns);
  for (const trace::StatsRow& r : report.result.rows) {
    Json row;
    for (const trace::StatsColumn* c : machine) row[std::string(c->id)] = json_value(c->value(r));
    rows.push_back(std::move(row));
  }
  return rows;
}

Json json_collectives(const StatsReport& report) {
  Json collectives = Json::array();
  for (const trace::CollectiveRow& r : report.collectives) {
    collectives.push_back({{"collective", trace::to_string(r.collective)},
                           {"message_bytes", r.message_bytes},
                           {"ranks", r.ranks ? Json(*r.ranks) : Json(nullptr)},
                           {"kernels", r.kernels},
                           {"total_ns", r.total_ns},
                           {"size_bytes", json_number(r.bandwidth.size_bytes)},
                           {"algbw_gbps", json_number(r.bandwidth.algbw_gbps)},
                           {"busbw_gbps", json_number(r.bandwidth.busbw_gbps)}});
  }
  return collectives;
}

Json json_collective_waits(const trace::CollectiveWaits& w) {
  Json ranks = Json::array();
  for (const trace::RankWaits& r : w.ranks) {
    ranks.push_back({{"rank", r.rank ? Json(*r.rank) : Json(nullptr)},
                     {"file", r.file},
                     {"matched", r.matched},
                     {"kernel_ns", r.kernel_ns},
                     {"wait_ns", r.wait_ns},
                     {"last_arrivals", r.last_arrivals},
                     {"clock_suspect", r.clock_suspect}});
  }
  return {{"collectives", w.collectives},
          {"unmatched", w.unmatched},
          {"waited_for_rank", w.waited_for && w.ranks[*w.waited_for].rank
                                  ? Json(*w.ranks[*w.waited_for].rank)
                                  : Json(nullptr)},
          {"ranks", std::move(ranks)}};
}

// The JSON document's fields, in their order: one entry each (docs/STATS.md, "JSON
// schema", lists the same; tests/unit/test_stats_docs.cc compares). A field whose
// value is nullopt is left out of that document.
struct JsonField {
  std::string_view key;
  std::optional<Json> (*value)(const StatsReport& report);
};

// clang-format off
constexpr JsonField kJsonFields[] = {
    {"files", [](const StatsReport& r) -> std::optional<Json> { return Json(r.files); }},
    {"files_left_out", [](const StatsReport& r) -> std::optional<Json> {
       if (r.files_left_out.empty()) return std::nullopt;
       return Json(r.files_left_out);
     }},
    {"group_by", [](const StatsReport& r) -> std::optional<Json> { return group_by_name(r.by); }},
    {"categories", [](const StatsReport& r) -> std::optional<Json> {
       return Json(r.result.categories_used);
     }},
    {"all_categories", [](const StatsReport& r) -> std::optional<Json> {
       return r.result.all_categories;
     }},
    {"range", [](const StatsReport& r) -> std::optional<Json> {
       if (!r.range) return Json(nullptr);
       return Json{{"begin_ns", json_ns(r.range->begin)}, {"end_ns", json_ns(r.range->end)}};
     }},
    {"total_ns", [](const StatsReport& r) -> std::optional<Json> { return r.result.total_ns; }},
    {"slices", [](const StatsReport& r) -> std::optional<Json> {
       return r.result.slices_considered;
     }},
    {"rows_total", [](const StatsReport& r) -> std::optional<Json> { return r.rows_total; }},
    {"events_total", [](const StatsReport& r) -> std::optional<Json> { return r.events_total; }},
    {"events_skipped", [](const StatsReport& r) -> std::optional<Json> {
       return r.events_skipped;
     }},
    {"text_bytes", [](const StatsReport& r) -> std::optional<Json> { return r.text_bytes; }},
    {"text_bytes_unread", [](const StatsReport& r) -> std::optional<Json> {
       return r.text_bytes_unread;
     }},
    {"counted_kernel_time", [](const StatsReport& r) -> std::optional<Json> {
       if (!r.counted.any_counted()) return std::nullopt;
       const trace::CountedCoverage& c = r.counted;
       return Json{{"kernel_ns", c.kernel_ns},           {"measured_ns", c.measured_ns},
                   {"same_work_ns", c.same_work_ns},     {"estimated_ns", c.estimated_ns},
                   {"not_counted_ns", c.not_counted_ns}, {"none_ns", c.none_ns}};
     }},
    {"collectives", [](const StatsReport& r) -> std::optional<Json> {
       if (r.collectives.empty()) return std::nullopt;
       return json_collectives(r);
     }},
    {"collective_waits", [](const StatsReport& r) -> std::optional<Json> {
       if (!r.collective_waits) return std::nullopt;
       return json_collective_waits(*r.collective_waits);
     }},
    {"total_flops", [](const StatsReport& r) -> std::optional<Json> {
       return json_number(r.result.total_flops);
     }},
    {"rows", [](const StatsReport& r) -> std::optional<Json> { return json_rows(r); }},
};
// clang-format on

}  // namespace

std::vector<std::string_view> stats_json_fields() {
  std::vector<std::string_view> keys;
  for (const JsonField& f : kJsonFields) keys.push_back(f.key);
  return keys;
}

void write_stats_json(const StatsReport& report, std::ostream& out) {
  Json doc = Json::object();
  for (const JsonField& f : kJsonFields) {
    if (std::optional<Json> v = f.value(report)) doc[std::string(f.key)] = std::move(*v);
  }
  // Names are bytes from the trace: invalid UTF-8 becomes U+FFFD rather than an error.
  out << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace flopline::cli
