// Uses the installed flopline::trace: builds a two-slice trace, renders, reads back.
#include <cstdio>
#include <string>

#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"

int main() {
  using namespace flopline::trace;
  Trace t;
  TraceBuilder b(t);
  auto track = b.track(b.process(1), 2);
  b.add_slice(track, Slice{1000, 500, t.strings.intern("outer"), t.strings.intern("cpu_op")});
  b.add_slice(track, Slice{1100, 100, t.strings.intern("inner"), t.strings.intern("cpu_op")});
  b.finalize();
  std::string json;
  render_chrome_trace(t, json);
  ReadResult r = read_chrome_trace_text(json, "memory");
  if (!r.ok()) {
    std::printf("error: %s\n", r.error->message().c_str());
    return 1;
  }
  std::printf("slices=%zu\n", r.trace.slice_count());
  return 0;
}
