#include "flopline/capture/profiler_steps.h"

#include <string>

#include "flopline/trace/args.h"
#include "flopline/trace/step_window.h"

namespace flopline::capture {

std::optional<std::int64_t> trailing_step_number(std::string_view name) {
  std::size_t digits = 0;
  while (digits < name.size() && name[name.size() - 1 - digits] >= '0' &&
         name[name.size() - 1 - digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || digits > 18) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : name.substr(name.size() - digits)) n = n * 10 + (c - '0');
  return n;
}

std::size_t emit_profiler_steps(const PairedMarkers& markers, const TracePids& pids,
                                std::string_view pattern, trace::TraceBuilder& builder,
                                const std::vector<bool>* held) {
  if (pattern.empty()) return 0;
  trace::Trace& t = builder.trace();
  const std::uint32_t cpu = builder.process(pids.cpu);
  const trace::StringId cat = t.strings.intern("user_annotation");
  std::size_t added = 0;
  for (std::size_t i = 0; i < markers.ranges.size(); ++i) {
    if (held != nullptr && i < held->size() && (*held)[i]) continue;
    const NvtxRange& r = markers.ranges[i];
    if (!trace::glob_match(r.name, pattern)) continue;
    const std::optional<std::int64_t> n = trailing_step_number(r.name);
    if (!n) continue;
    trace::ArgsBuilder a;
    a.add("NVTX range", r.name);
    const std::uint32_t track = builder.track(cpu, static_cast<std::int64_t>(r.thread_id));
    builder.add_slice(track, trace::Slice{r.start, r.end - r.start,
                                          t.strings.intern("ProfilerStep#" + std::to_string(*n)),
                                          cat, t.args.add_json(a.finish())});
    ++added;
  }
  return added;
}

}  // namespace flopline::capture
