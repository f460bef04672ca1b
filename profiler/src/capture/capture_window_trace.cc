// Capture windows in the trace (docs/TRACE_FORMAT.md, "Capture windows").
#include <nlohmann/json.hpp>

#include "decode_context.h"
#include "flopline/trace/args.h"

namespace flopline::capture::detail {

void emit_capture_windows(DecodeContext& ctx) {
  const RecordBatch& b = ctx.batch;
  if (b.capture_range.empty()) return;
  trace::Trace& t = ctx.trace;
  t.info.emplace_back("capture range", b.capture_range);
  t.info.emplace_back("capture windows", std::to_string(b.capture_windows.size()));
  const trace::StringId cat = t.strings.intern("flopline");
  const trace::StringId start_name = t.strings.intern("capture window start");
  const trace::StringId end_name = t.strings.intern("capture window end");
  // On the thread whose call opened or closed the window; a window the clock opened or
  // closed (delay, duration, the program's end) goes on the process's main thread.
  const StreamDecodeContext* stream = ctx.options.stream;
  auto instant = [&](TimeNs at, trace::StringId name, std::uint32_t index, const std::string& why,
                     std::uint32_t thread) {
    // A streaming append writes the instants that fell since the last one.
    if (stream != nullptr && (at <= stream->instants_after || at > stream->instants_upto)) return;
    trace::ArgsBuilder a;
    a.add_uint("capture window", index);
    a.add("reason", why);
    trace::Instant i;
    i.ts = at;
    i.name = name;
    i.cat = cat;
    i.args = t.args.add_json(a.finish());
    i.scope = trace::InstantScope::kProcess;
    ctx.builder.add_instant(ctx.cpu_track(thread != 0 ? thread : b.process_id), i);
  };
  nlohmann::json list = nlohmann::json::array();
  for (const CaptureWindowRecord& w : b.capture_windows) {
    instant(w.start, start_name, w.index, w.opened_by, w.open_thread);
    nlohmann::json j = {{"index", w.index}, {"startNs", w.start}, {"openedBy", w.opened_by}};
    if (w.open) {
      j["endNs"] = nullptr;  // still open when this trace was written
    } else {
      instant(w.end, end_name, w.index, w.closed_by, w.close_thread);
      j["endNs"] = w.end;
      j["closedBy"] = w.closed_by;
    }
    list.push_back(std::move(j));
  }
  t.extra_top_level.emplace_back(
      "captureWindows", list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace flopline::capture::detail
