// libFuzzer entry for the Chrome-trace reader: any bytes must give either a model
// or an error with a position, never a crash, a hang or unbounded memory. The
// model's invariants are checked too, since a wrong count is also a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"
#include "trace/chrome_reader_impl.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace flopline::trace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The first byte picks sequential or threaded parsing, so both stay covered.
  const auto threading = size > 0 && (data[0] & 1) ? chrome::Threading::kAlways : chrome::Threading::kNever;
  ReadResult r = chrome::read_text(text, "fuzz.json", {}, threading);
  if (!r.ok()) {
    check(!r.error->reason.empty());
    check(r.error->offset <= size);
    return 0;
  }
  const TraceReport& rep = r.trace.report;
  check(rep.events_loaded + rep.events_metadata + rep.events_skipped == rep.events_total);
  for (const Track& t : r.trace.tracks) {
    check(t.process < r.trace.processes.size());
    for (std::size_t row = 0; row < t.rows.size(); ++row) {
      for (std::size_t i = 0; i < t.rows[row].size(); ++i) {
        check(t.rows[row][i].dur >= 0);
        if (i > 0) check(t.rows[row][i - 1].end() <= t.rows[row][i].start);
        if (t.rows[row][i].args != kNoArgs) {
          // Stored args are objects the lazy accessors can walk.
          (void)json_members(r.trace.args.json(t.rows[row][i].args));
        }
      }
    }
  }
  for (const Flow& f : r.trace.flows) {
    check(f.from.track < r.trace.tracks.size() && f.to.track < r.trace.tracks.size());
  }
  return 0;
}
