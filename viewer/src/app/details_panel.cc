#include "details_panel.h"

#include "counted_info.h"
#include "slice_info.h"

namespace flopline::viewer {
namespace {

void draw_flows(AppState& s) {
  const TraceList traces = s.trace_list();
  if (s.selection.flows.empty()) return;
  ImGui::Separator();
  ImGui::Text("Flows (%zu)  [J jumps along the next]", s.selection.flows.size());
  std::optional<SliceHandle> go;
  for (std::size_t i = 0; i < s.selection.flows.size(); ++i) {
    const FlowLink& f = s.selection.flows[i];
    const bool outgoing = f.from == s.selection.slice;
    const SliceHandle other = outgoing ? f.to : f.from;
    const trace::Slice& sl = slice_of(traces, other);
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::SmallButton(outgoing ? "->" : "<-")) go = other;
    ImGui::SameLine();
    ImGui::TextWrapped("%s %s (%s)", outgoing ? "to" : "from",
                       display_name(s, other.trace, sl.name).c_str(),
                       format_duration(sl.dur).c_str());
    ImGui::PopID();
  }
  if (go) select_slice(s, *go, false);
}

}  // namespace

void jump_along_flow(AppState& s) {
  if (auto target = s.selection.next_flow_target()) select_slice(s, *target, false);
}

void draw_details_panel(AppState& s, ImVec2 size) {
  ImGui::BeginChild("##details", size, true);
  if (!s.selection.has_slice()) {
    ImGui::TextDisabled("Click a slice to see its details.");
    ImGui::EndChild();
    return;
  }
  const SliceHandle h = s.selection.slice;
  const std::string& args = args_of(s, s.selected_args, h);
  const SliceInfo info = describe_slice(s.trace_list(), h, args, s.begin_ns);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(info.name.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  // Keys take what they need; values get the rest of the width and wrap in it.
  auto setup_columns = [] {
    ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  };
  if (ImGui::BeginTable("##summary", 2, ImGuiTableFlags_SizingFixedFit)) {
    setup_columns();
    auto row = [](const char* k, const std::string& v) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextDisabled("%s", k);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextWrapped("%s", v.c_str());
    };
    row("start", info.start);
    row("duration", info.duration);
    row("category", info.category);
    const LayoutTrack* track = nullptr;
    const std::uint32_t lr = s.layout.layout_row_of(h.trace, h.ref.track, h.ref.row);
    if (lr != trace::kNone) track = &s.layout.tracks()[s.layout.rows()[lr].layout_track];
    if (track) row("track", track->name);
    if (s.files.size() > 1) row("file", s.files[h.trace]->label);
    for (const InfoLine& m : info.metrics) row(m.key.c_str(), m.value);
    for (const InfoLine& m : counted_info(info)) row(m.key.c_str(), m.value);
    const trace::OperatorIndex* ops = h.trace < s.operators.size() ? s.operators[h.trace] : nullptr;
    for (const InfoLine& m : operator_info(*s.traces[h.trace], ops, h.ref))
      row(m.key.c_str(), m.value);
    ImGui::EndTable();
  }
  if (!info.args.empty()) {
    ImGui::Separator();
    ImGui::Text("Args (%zu)", info.args.size());
    if (ImGui::BeginTable("##args", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      setup_columns();
      for (const InfoLine& a : info.args) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextDisabled("%s", a.key.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::TextWrapped("%s", a.value.c_str());
      }
      ImGui::EndTable();
    }
  }
  draw_flows(s);
  ImGui::EndChild();
}

}  // namespace flopline::viewer
