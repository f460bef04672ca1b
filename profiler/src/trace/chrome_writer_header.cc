// The members of a Chrome trace around traceEvents: schemaVersion, deviceProperties
// (Kineto's keys plus flopline's peaks), displayTimeUnit, baseTimeNanoseconds, and
// after the events flopline's own metadata and the other top-level members a read
// trace carried. Small and written once, so plain std::string appends suffice.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/json_text.h"
#include "flopline/trace/json_value.h"
#include "trace/chrome_writer_internal.h"

#ifndef FLOPLINE_VERSION
#error "FLOPLINE_VERSION must be defined by the build"
#endif

namespace flopline::trace::chrome_writer_detail {
namespace {

// deviceProperties keys the writer fills from DeviceProperties' fields.
constexpr std::array<std::string_view, 12> kDeviceKeys = {
    "id",     "name",         "totalGlobalMem",     "computeMajor",   "computeMinor",
    "numSms", "clockRateKHz", "memoryClockRateKHz", "memoryBusWidth", "peakFlops",
    "peakBandwidthBytesPerSec", "peakSource"};

// Top-level keys the writer itself produces; a read trace's members of these names
// are replaced, not repeated.
constexpr std::array<std::string_view, 6> kTopKeys = {
    "schemaVersion", "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds", "traceEvents",
    "flopline"};

bool contains(const auto& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void member_key(std::string& s, std::string_view key) {
  s += ',';
  append_json_string(s, key);
  s += ':';
}

void write_device(std::string& s, const DeviceProperties& d) {
  s += "{\"id\":";
  append_int(s, d.id);
  member_key(s, "name");
  append_json_string(s, d.name);
  member_key(s, "totalGlobalMem");
  append_uint(s, d.total_global_mem);
  member_key(s, "computeMajor");
  append_int(s, d.compute_major);
  member_key(s, "computeMinor");
  append_int(s, d.compute_minor);
  member_key(s, "numSms");
  append_int(s, d.num_sms);
  member_key(s, "clockRateKHz");
  append_int(s, d.clock_khz);
  member_key(s, "memoryClockRateKHz");
  append_int(s, d.memory_clock_khz);
  member_key(s, "memoryBusWidth");
  append_int(s, d.memory_bus_width);
  member_key(s, "peakFlops");
  s += '{';
  std::vector<std::string_view> seen;
  for (const auto& [precision, flops] : d.peak_flops) {
    if (contains(seen, precision)) continue;  // JSON objects want unique keys
    seen.push_back(precision);
    if (seen.size() > 1) s += ',';
    append_json_string(s, precision);
    s += ':';
    append_double(s, flops);
  }
  s += '}';
  member_key(s, "peakBandwidthBytesPerSec");
  append_double(s, d.peak_bytes_per_s);
  member_key(s, "peakSource");
  append_json_string(s, d.peak_source);
  // Keys of the entry as read that flopline does not model (Kineto's warpSize,
  // regsPerBlock...) go back out unchanged.
  if (!d.raw_json.empty()) {
    std::vector<std::string> written;
    for (const auto& [key, value] : json_members(d.raw_json)) {
      if (contains(kDeviceKeys, key) || contains(written, key)) continue;
      written.push_back(key);
      member_key(s, key);
      append_json_compact(s, value);
    }
  }
  s += '}';
}

}  // namespace

void write_header(RenderContext& ctx, OutBuffer& out) {
  std::string s = "{\"schemaVersion\":1,\"deviceProperties\":[";
  for (std::size_t i = 0; i < ctx.trace.devices.size(); ++i) {
    if (i > 0) s += ',';
    write_device(s, ctx.trace.devices[i]);
  }
  s += "],\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":";
  append_int(s, ctx.base);
  s += ",\"traceEvents\":[\n";
  out.append(s);
}

void write_footer(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  std::string s = "],\"flopline\":{\"version\":";
  // A version in info is the one that made the trace (a re-written trace keeps it).
  auto version = std::find_if(t.info.begin(), t.info.end(),
                              [](const auto& kv) { return kv.first == "version"; });
  append_json_string(s, version != t.info.end() ? std::string_view(version->second)
                                                : std::string_view(FLOPLINE_VERSION));
  std::vector<std::string_view> written = {"version", "droppedRecords"};
  for (const auto& [key, value] : t.info) {
    if (contains(written, key)) continue;
    written.push_back(key);
    member_key(s, key);
    append_json_string(s, value);
  }
  s += ",\"droppedRecords\":";
  append_uint(s, t.report.dropped_records);
  s += '}';
  std::vector<std::string_view> top(kTopKeys.begin(), kTopKeys.end());
  for (const auto& [key, value] : t.extra_top_level) {
    if (contains(top, key)) continue;
    top.push_back(key);
    member_key(s, key);
    const std::size_t before = s.size();
    append_json_compact(s, value);
    if (s.size() == before) s += "null";  // an empty value would break the object
  }
  s += "}\n";
  out.append(s);
}

}  // namespace flopline::trace::chrome_writer_detail
