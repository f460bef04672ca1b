// Writes a Trace as Chrome Trace Event Format JSON with Kineto's conventions, so
// Perfetto, chrome://tracing, Holistic Trace Analysis and TensorBoard open it.
//
// Layout: one JSON object with schemaVersion, deviceProperties, displayTimeUnit,
// baseTimeNanoseconds, traceEvents (one event per line) and "flopline" metadata.
// ts/dur are microseconds with exactly three decimals relative to
// baseTimeNanoseconds, so nanoseconds survive. The file is written to PATH.tmp and
// renamed; a path ending in ".gz" is gzip-compressed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "flopline/trace/model.h"

namespace flopline::trace {

struct WriteOptions {
  // Added to process ids of GPU processes and to flow ids so that traces of several
  // processes (ranks) merged into one view never cross-link. 0 keeps ids as they are.
  std::int64_t id_namespace = 0;
  int gzip_level = 1;  // used when the path ends in .gz
  // baseTimeNanoseconds when it is not after the trace's earliest time (the start of a
  // run whose ranks should share one time axis); otherwise the earliest time.
  std::optional<TimeNs> time_base;
};

struct WriteResult {
  bool ok = false;
  std::string error;                // "cannot write PATH: reason" when !ok
  std::uint64_t bytes_written = 0;  // uncompressed JSON bytes
  std::uint64_t events_written = 0;
};

// Serialises into `out` (the whole document). Args left in the source file
// (ArgsMode::kOnDemand) come out as {}: check args.location_count() first.
void render_chrome_trace(const Trace& trace, std::string& out, const WriteOptions& opt = {});
// The events of `trace` that end in (after, upto] (a flow: its later end), slices that
// `keep` refuses left out, appended to `out` as lines of a Chrome-trace array
// ("{...},\n" each, times in microseconds with three decimals after `base`, absolute
// with the default 0), after the metadata events of every process and track. Returns the
// events written, metadata events aside. What the incremental trace file
// (incremental_trace.h) appends at each flush.
std::uint64_t render_chrome_event_lines(const Trace& trace, TimeNs after, TimeNs upto,
                                        const std::function<bool(const Slice&)>& keep,
                                        std::string& out, const WriteOptions& opt = {},
                                        TimeNs base = 0);
// The same lines for every event of `trace`, handed to `sink` a few MB at a time rather
// than built into one string, without the last line's ",\n". Returns the events written
// (metadata events aside), or nothing when a sink call returned false.
std::optional<std::uint64_t> stream_chrome_event_lines(
    const Trace& trace, TimeNs base, const std::function<bool(std::string_view)>& sink,
    const WriteOptions& opt = {});
// The end of a Chrome trace whose events were written as lines by
// render_chrome_event_lines() with `base`: "]" closing traceEvents, the members
// write_chrome_trace() writes around it (schemaVersion, deviceProperties,
// displayTimeUnit, baseTimeNanoseconds = base, the "flopline" metadata, the trace's
// other top-level members) and the object's closing "}", appended to `out`. A streamed
// trace file ends with it once its first line has become {"traceEvents":[.
void render_chrome_trace_tail(const Trace& trace, TimeNs base, std::string& out,
                              const WriteOptions& opt = {});
// Writes PATH.tmp then renames to PATH. Never leaves a half-written PATH. Refuses (ok
// false, nothing written) a trace whose args were left in its source file
// (ArgsMode::kOnDemand): it would write them as {} and lose them.
WriteResult write_chrome_trace(const Trace& trace, const std::string& path,
                               const WriteOptions& opt = {});

}  // namespace flopline::trace
