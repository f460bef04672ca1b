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

void write_stats_json(const StatsReport& report, std::ostream& out) {
  using Json = nlohmann::ordered_json;  // keys in the documented order
  const trace::StatsResult& res = report.result;
  Json doc;
  doc["files"] = report.files;
  if (!report.files_left_out.empty()) doc["files_left_out"] = report.files_left_out;
  doc["group_by"] = group_by_name(report.by);
  doc["categories"] = res.categories_used;
  doc["all_categories"] = res.all_categories;
  doc["range"] = nullptr;
  if (report.range) {
    doc["range"] =
        Json{{"begin_ns", json_ns(report.range->begin)}, {"end_ns", json_ns(report.range->end)}};
  }
  doc["total_ns"] = res.total_ns;
  doc["slices"] = res.slices_considered;
  doc["rows_total"] = report.rows_total;
  doc["events_total"] = report.events_total;
  doc["events_skipped"] = report.events_skipped;
  doc["text_bytes"] = report.text_bytes;
  doc["text_bytes_unread"] = report.text_bytes_unread;
  if (report.counted.any_counted()) {
    const trace::CountedCoverage& c = report.counted;
    doc["counted_kernel_time"] = {
        {"kernel_ns", c.kernel_ns},           {"measured_ns", c.measured_ns},
        {"same_work_ns", c.same_work_ns},     {"estimated_ns", c.estimated_ns},
        {"not_counted_ns", c.not_counted_ns}, {"none_ns", c.none_ns}};
  }
  if (!report.collectives.empty()) {
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
    doc["collectives"] = std::move(collectives);
  }
  if (report.collective_waits) {
    const trace::CollectiveWaits& w = *report.collective_waits;
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
    doc["collective_waits"] = {{"collectives", w.collectives},
                               {"unmatched", w.unmatched},
                               {"waited_for_rank", w.waited_for && w.ranks[*w.waited_for].rank
                                                       ? Json(*w.ranks[*w.waited_for].rank)
                                                       : Json(nullptr)},
                               {"ranks", std::move(ranks)}};
  }
  doc["total_flops"] = json_number(res.total_flops);
  Json rows = Json::array();
  const std::vector<const trace::StatsColumn*> machine =
      trace::columns_for(trace::kStatsMachine, report.columns);
  for (const trace::StatsRow& r : res.rows) {
    Json row;
    for (const trace::StatsColumn* c : machine) row[std::string(c->id)] = json_value(c->value(r));
    rows.push_back(std::move(row));
  }
  doc["rows"] = std::move(rows);
  // Names are bytes from the trace: invalid UTF-8 becomes U+FFFD rather than an error.
  out << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace flopline::cli
