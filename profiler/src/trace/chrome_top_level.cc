// The envelope members the model understands besides traceEvents: Kineto's
// deviceProperties and flopline's own "flopline" object. Both are small and read
// once, so the lazy json_value.h accessors are fast enough here.
#include <string>

#include "flopline/trace/json_value.h"
#include "trace/chrome_reader_impl.h"

namespace flopline::trace::chrome {
namespace {

template <typename Int>
void set_int(std::string_view value, Int& out) {
  if (const auto v = json_int(value)) out = static_cast<Int>(*v);
}

void set_double(std::string_view value, double& out) {
  if (const auto v = json_number(value)) out = *v;
}

void set_string(std::string_view value, std::string& out) {
  if (auto v = json_string(value)) out = std::move(*v);
}

DeviceProperties parse_device(std::string_view entry) {
  DeviceProperties d;
  d.raw_json.assign(entry);
  for (const auto& [key, value] : json_members(entry)) {
    if (key == "id")
      set_int(value, d.id);
    else if (key == "name")
      set_string(value, d.name);
    else if (key == "numSms")
      set_int(value, d.num_sms);
    else if (key == "computeMajor")
      set_int(value, d.compute_major);
    else if (key == "computeMinor")
      set_int(value, d.compute_minor);
    else if (key == "totalGlobalMem")
      set_int(value, d.total_global_mem);
    else if (key == "clockRateKHz")
      set_int(value, d.clock_khz);
    else if (key == "memoryClockRateKHz")
      set_int(value, d.memory_clock_khz);
    else if (key == "memoryBusWidth")
      set_int(value, d.memory_bus_width);
    else if (key == "peakBandwidthBytesPerSec")
      set_double(value, d.peak_bytes_per_s);
    else if (key == "peakSource")
      set_string(value, d.peak_source);
    else if (key == "peakFlops") {
      for (const auto& [precision, flops] : json_members(value)) {
        if (const auto v = json_number(flops)) d.peak_flops.emplace_back(precision, *v);
      }
    }
  }
  return d;
}

}  // namespace

// "deviceProperties":[{...},...]. Entries that are not objects are ignored.
bool read_device_properties(json::Scanner& s, Trace& trace) {
  s.skip_ws();
  s.set_pos(s.pos() + 1);  // the '['
  bool first = true;
  std::string strict;
  while (s.next_element(first)) {
    s.skip_ws();
    const char* begin = s.pos();
    const bool is_object = s.peek() == '{';
    s.reset_laxness();
    if (!s.skip_value()) return false;
    if (!is_object) continue;
    std::string_view entry(begin, static_cast<std::size_t>(s.pos() - begin));
    if (s.laxness().any()) {  // raw_json goes back out: keep it strict JSON
      strict.clear();
      json::Scanner::write_strict(entry, strict);
      entry = strict;
    }
    trace.devices.push_back(parse_device(entry));
  }
  return !s.failed();
}

// "flopline":{...}: string members become Trace::info; numbers keep their text;
// droppedRecords goes to the report (the writer writes it from there).
bool read_flopline_info(json::Scanner& s, Trace& trace) {
  s.skip_ws();
  const char* begin = s.pos();
  if (!s.skip_value()) return false;
  const std::string_view object(begin, static_cast<std::size_t>(s.pos() - begin));
  for (const auto& [key, value] : json_members(object)) {
    if (key == "droppedRecords") {
      if (const auto v = json_int(value); v && *v >= 0)
        trace.report.dropped_records = static_cast<std::uint64_t>(*v);
      continue;
    }
    if (auto text = json_string(value)) {
      trace.info.emplace_back(key, std::move(*text));
    } else {
      trace.info.emplace_back(key, std::string(value));
    }
  }
  return true;
}

}  // namespace flopline::trace::chrome
