// Helpers shared by the reader tests: read text that must be a trace, and look into
// what the read reported.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "flopline/trace/chrome_reader.h"

namespace flopline::trace::test {

// Reads `text`, failing the test (not aborting it) when it is not a readable trace.
inline ReadResult read_ok(std::string_view text) {
  ReadResult r = read_chrome_trace_text(text, "t.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error->message());
  return r;
}

inline bool has_warning(const ReadResult& r, std::string_view text) {
  return std::any_of(r.trace.report.warnings.begin(), r.trace.report.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// How many events were skipped for exactly this reason.
inline std::uint64_t skipped_for(const ReadResult& r, std::string_view reason) {
  for (const auto& [k, n] : r.trace.report.skip_reasons) {
    if (k == reason) return n;
  }
  return 0;
}

}  // namespace flopline::trace::test
