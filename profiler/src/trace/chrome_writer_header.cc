// The members of a Chrome trace around traceEvents: schemaVersion, deviceProperties
// (Kineto's keys plus flopline's peaks), displayTimeUnit, baseTimeNanoseconds, and
// after the events flopline's own metadata and the other top-level members a read
// trace carried. Small and written once, so they are built as nlohmann_json values;
// only the events between them go through the fast writer.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flopline/trace/json_text.h"
#include "flopline/trace/json_value.h"
#include "trace/chrome_writer_internal.h"

#ifndef FLOPLINE_VERSION
#error "FLOPLINE_VERSION must be defined by the build"
#endif

namespace flopline::trace::chrome_writer_detail {
namespace {

// Members keep the order they are written in (Kineto's order; a read trace's order).
using Json = nlohmann::ordered_json;

// Top-level keys the writer itself produces; a read trace's members of these names
// are replaced, not repeated.
constexpr std::array<std::string_view, 6> kTopKeys = {"schemaVersion",   "deviceProperties",
                                                      "displayTimeUnit", "baseTimeNanoseconds",
                                                      "traceEvents",     "flopline"};

// Whole numbers as integers, as the events write them ("67000000000000", not
// "67000000000000.0"); non-finite values come out as null.
Json number(double v) {
  constexpr double kExactInt = 9007199254740992.0;  // 2^53
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < kExactInt) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

// A value as a tolerant read stored it (nan, invalid UTF-8, newlines), made strict;
// null when even that is not JSON (an empty value).
Json value_of(std::string_view raw) {
  std::string strict;
  append_json_compact(strict, raw);
  Json v = Json::parse(strict, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? Json(nullptr) : v;
}

// One line, and any byte sequence in names gives valid JSON (invalid UTF-8 -> U+FFFD).
std::string dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json device_json(const DeviceProperties& d) {
  Json flops = Json::object();
  for (const auto& [precision, rate] : d.peak_flops) {
    if (!flops.contains(precision)) flops[precision] = number(rate);  // keys are unique
  }
  Json j = {{"id", d.id},
            {"name", d.name},
            {"totalGlobalMem", d.total_global_mem},
            {"computeMajor", d.compute_major},
            {"computeMinor", d.compute_minor},
            {"numSms", d.num_sms},
            {"clockRateKHz", d.clock_khz},
            {"memoryClockRateKHz", d.memory_clock_khz},
            {"memoryBusWidth", d.memory_bus_width},
            {"peakFlops", std::move(flops)},
            {"peakBandwidthBytesPerSec", number(d.peak_bytes_per_s)},
            {"peakSource", d.peak_source}};
  // Keys of the entry as read that flopline does not model (Kineto's warpSize,
  // regsPerBlock...) go back out with the same values.
  for (const auto& [key, value] : json_members(d.raw_json)) {
    if (!j.contains(key)) j[key] = value_of(value);
  }
  return j;
}

}  // namespace

void write_header(RenderContext& ctx, OutBuffer& out) {
  Json devices = Json::array();
  for (const DeviceProperties& d : ctx.trace.devices) devices.push_back(device_json(d));
  const Json head = {{"schemaVersion", 1},
                     {"deviceProperties", std::move(devices)},
                     {"displayTimeUnit", "ms"},
                     {"baseTimeNanoseconds", ctx.base}};
  // The object stays open: traceEvents follows, one event per line.
  std::string s = dump(head);
  s.pop_back();
  s += ",\"traceEvents\":[\n";
  out.append(s);
}

void write_footer(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  // A version in info is the one that made the trace (a re-written trace keeps it).
  auto version = std::find_if(t.info.begin(), t.info.end(),
                              [](const auto& kv) { return kv.first == "version"; });
  Json meta = {{"version", version != t.info.end() ? version->second : FLOPLINE_VERSION}};
  for (const auto& [key, value] : t.info) {
    if (key != "droppedRecords" && !meta.contains(key)) meta[key] = value;
  }
  meta["droppedRecords"] = t.report.dropped_records;
  Json tail = {{"flopline", std::move(meta)}};
  Json distributed;
  for (const auto& [key, value] : t.extra_top_level) {
    const bool ours = std::find(kTopKeys.begin(), kTopKeys.end(), key) != kTopKeys.end();
    if (key == "distributedInfo" && distributed.is_null()) {
      distributed = value_of(value);
    } else if (!ours && !tail.contains(key) && key != "distributedInfo") {
      tail[key] = value_of(value);
    }
  }
  // The rest of the object write_header opened: "]," closes traceEvents.
  std::string s = dump(tail);
  if (distributed.is_object()) {
    // Kineto's spacing: Holistic Trace Analysis finds a file's rank with the pattern
    // "rank":\s+(\d+), which needs the space after the colon.
    s.pop_back();  // the closing brace
    s += R"(,"distributedInfo":{)";
    bool first = true;
    for (const auto& [k, v] : distributed.items()) {
      s += first ? "" : ", ";
      s += dump(Json(k)) + ": " + dump(v);
      first = false;
    }
    s += "}}";
  } else if (!distributed.is_null()) {
    s.pop_back();
    s += R"(,"distributedInfo":)" + dump(distributed) + "}";
  }
  out.append("],");
  out.append(std::string_view(s).substr(1));
  out.append("\n");
}

}  // namespace flopline::trace::chrome_writer_detail
