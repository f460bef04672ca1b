// Helpers shared by the viewer core tests: traces from JSON text, rows from numbers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/slice_handle.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::viewer::testing {

// The schema's column with this id; the test fails (and aborts) when there is none.
inline const trace::StatsColumn& column(std::string_view id) {
  const trace::StatsColumn* c = trace::find_stats_column(id);
  if (c == nullptr) {
    ADD_FAILURE() << "no stats column " << id;
    std::abort();
  }
  return *c;
}

inline trace::Trace read_json(std::string_view json,
                              trace::ArgsMode mode = trace::ArgsMode::kKeep) {
  trace::ReadOptions opt;
  opt.args = mode;
  trace::ReadResult r = trace::read_chrome_trace_text(json, "test.json", opt);
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message() : "");
  return std::move(r.trace);
}

// One X event, ts and dur in microseconds as text.
inline std::string x_event(std::string_view name, std::string_view cat, int pid, int tid,
                           std::string_view ts, std::string_view dur, std::string_view args = "") {
  std::string e = "{\"ph\":\"X\",\"name\":\"" + std::string(name) + "\",\"cat\":\"" +
                  std::string(cat) + "\",\"pid\":" + std::to_string(pid) +
                  ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::string(ts) +
                  ",\"dur\":" + std::string(dur);
  if (!args.empty()) e += ",\"args\":" + std::string(args);
  return e + "}";
}

inline std::string trace_json(const std::vector<std::string>& events, std::string_view head = "") {
  std::string s(1, '{');  // piece by piece: GCC 12 warns falsely on "literal" + string
  s += head;
  s += "\"traceEvents\":[";
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i > 0) s += ",\n";
    s += events[i];
  }
  return s + "]}";
}

// A row (sorted, non-overlapping) from (start, dur) pairs in ns.
inline std::vector<trace::Slice> make_row(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& spans, trace::StringId name = 1) {
  std::vector<trace::Slice> row;
  for (const auto& [start, dur] : spans) {
    trace::Slice s;
    s.start = start;
    s.dur = dur;
    s.name = name;
    row.push_back(s);
  }
  return row;
}

inline std::vector<const trace::Trace*> list_of(std::initializer_list<const trace::Trace*> l) {
  return l;
}

}  // namespace flopline::viewer::testing
