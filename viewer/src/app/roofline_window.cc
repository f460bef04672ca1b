#include "roofline_window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/colors.h"
#include "core/viewport.h"
#include "table_window.h"
#include "ui_colors.h"

namespace flopline::viewer {
namespace {

constexpr ImU32 kAxis = IM_COL32(150, 155, 165, 255);
constexpr ImU32 kGrid = IM_COL32(255, 255, 255, 22);
constexpr ImU32 kBandwidth = IM_COL32(90, 170, 255, 255);
constexpr ImU32 kCompute = IM_COL32(255, 150, 60, 255);
constexpr ImU32 kLabel = IM_COL32(200, 204, 212, 255);

std::string tick_label(double v) {
  char buf[32];
  if (v >= 1 && v < 1e6) {
    std::snprintf(buf, sizeof buf, "%g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.0e", v);
  }
  return buf;
}

void draw_axes(ImDrawList* dl, const LogLogMap& m) {
  const float right = m.left_px + m.width_px;
  const float bottom = m.top_px + m.height_px;
  for (double x : log_ticks(m.x_min, m.x_max)) {
    const float px = m.x_of(x);
    dl->AddLine({px, m.top_px}, {px, bottom}, kGrid);
    const std::string l = tick_label(x);
    dl->AddText({px - ImGui::CalcTextSize(l.c_str()).x * 0.5f, bottom + 3}, kLabel, l.c_str());
  }
  for (double y : log_ticks(m.y_min, m.y_max)) {
    const float py = m.y_of(y);
    dl->AddLine({m.left_px, py}, {right, py}, kGrid);
    const std::string l = tick_label(y);
    dl->AddText(
        {m.left_px - ImGui::CalcTextSize(l.c_str()).x - 4, py - ImGui::GetFontSize() * 0.5f},
        kLabel, l.c_str());
  }
  dl->AddRect({m.left_px, m.top_px}, {right, bottom}, kAxis);
  const char* xl = "arithmetic intensity (FLOPs per byte)";
  dl->AddText({m.left_px + (m.width_px - ImGui::CalcTextSize(xl).x) * 0.5f,
               bottom + ImGui::GetFontSize() + 6},
              kLabel, xl);
  dl->AddText({m.left_px, m.top_px - ImGui::GetFontSize() - 4}, kLabel, "achieved TFLOP/s");
}

void draw_ceilings(ImDrawList* dl, const Roofline& r, const LogLogMap& m) {
  const float right = m.left_px + m.width_px;
  const double top_peak = r.compute.empty() ? 0 : r.compute.back().tflops;
  if (r.bandwidth_gbps > 0) {
    // The slope TFLOP/s = intensity x bandwidth, up to the highest compute ceiling.
    const double x_end = top_peak > 0 ? std::min(m.x_max, r.ridge_intensity(top_peak)) : m.x_max;
    const double x0 = m.x_min;
    dl->AddLine({m.x_of(x0), m.y_of(x0 * r.bandwidth_gbps / 1e3)},
                {m.x_of(x_end), m.y_of(x_end * r.bandwidth_gbps / 1e3)}, kBandwidth, 2.0f);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f GB/s", r.bandwidth_gbps);
    // A fifth of the way along the axis: clear of the corner, where low-intensity points sit.
    const double xl = std::min(x0 * std::pow(m.x_max / m.x_min, 0.2), x_end / 3);
    dl->AddText({m.x_of(xl), m.y_of(xl * r.bandwidth_gbps / 1e3) - ImGui::GetFontSize() - 4},
                kBandwidth, buf);
  }
  for (const ComputeCeiling& c : r.compute) {
    const double ridge =
        r.bandwidth_gbps > 0 ? std::max(m.x_min, r.ridge_intensity(c.tflops)) : m.x_min;
    const float y = m.y_of(c.tflops);
    dl->AddLine({m.x_of(ridge), y}, {right, y}, kCompute, 1.5f);
  }
  // One label per distinct peak, none over another.
  for (const CeilingLabel& l : ceiling_labels(r, m, ImGui::GetFontSize() + 1)) {
    dl->AddText({right - ImGui::CalcTextSize(l.text.c_str()).x - 4, l.y}, kCompute, l.text.c_str());
  }
}

// The legend right of the plot: each point's colour, its number (drawn beside the
// point too) and its name.
constexpr std::size_t kLegendRows = 16;

}  // namespace

void RooflineWindow::draw_plot(AppState& s, const OpTable& table) {
  const Roofline& r = *roofline_;
  ImGui::TextUnformatted("points:");
  ImGui::SameLine();
  trace::GroupBy by = table.query().by;
  if (grouping_combo("##points", &by)) s.table_by_request = by;
  ImGui::SameLine();
  ImGui::TextDisabled("%zu with FLOPs and bytes", r.points.size());
  if (!r.has_ceilings()) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.4f, 1),
                       "The traces carry no device peaks (deviceProperties): points only.");
  } else {
    ImGui::Text("%s", r.device.c_str());
  }
  if (r.points.empty()) {
    ImGui::TextDisabled("No %s carries both FLOPs and bytes%s.", "row",
                        r.rows_without_bytes > 0 ? " (some carry FLOPs without bytes)" : "");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  const std::vector<std::size_t> legend = legend_points(r, kLegendRows);
  float legend_w = 0;
  for (std::size_t k = 0; k < legend.size(); ++k)
    legend_w =
        std::max(legend_w, ImGui::CalcTextSize(legend_label(r.points[legend[k]], k + 1).c_str()).x);
  legend_w = std::min(legend_w + font * 2, avail.x * 0.35f);
  const float left = origin.x + font * 4;
  const float top = origin.y + font * 1.5f;
  const float w = std::max(50.0f, avail.x - font * 5 - legend_w);
  const float h = std::max(50.0f, avail.y - font * 4);
  const LogLogMap map = LogLogMap::fit(r, left, top, w, h);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_axes(dl, map);
  dl->PushClipRect({left, top}, {left + w, top + h}, true);
  draw_ceilings(dl, r, map);
  const double total = std::max<double>(1.0, static_cast<double>(table.total_ns()));
  for (const RooflinePoint& p : r.points) {
    // Area grows with the share of time: the points that matter stand out.
    const float radius =
        3.0f + 9.0f * static_cast<float>(std::sqrt(static_cast<double>(p.total_ns) / total));
    const ImVec2 c{map.x_of(p.intensity), map.y_of(p.tflops)};
    const bool lit = s.selection.highlighted_name == p.name;
    dl->AddCircleFilled(c, radius, color_for_key(p.name));
    dl->AddCircle(c, radius, lit ? kSelectionOutline : IM_COL32(0, 0, 0, 200), 0,
                  lit ? 2.5f : 1.0f);
  }
  for (std::size_t k = 0; k < legend.size(); ++k) {
    const RooflinePoint& p = r.points[legend[k]];
    const std::string number = std::to_string(k + 1);
    dl->AddText({map.x_of(p.intensity) + 7, map.y_of(p.tflops) - font - 2}, kLabel, number.c_str());
  }
  dl->PopClipRect();
  const float lx = left + w + font;
  for (std::size_t k = 0; k < legend.size(); ++k) {
    const RooflinePoint& p = r.points[legend[k]];
    const float ly = top + static_cast<float>(k) * (font + 4);
    dl->AddCircleFilled({lx + font * 0.4f, ly + font * 0.5f}, font * 0.35f, color_for_key(p.name));
    const std::string text = legend_label(p, k + 1);
    dl->PushClipRect({lx, ly}, {lx + legend_w, ly + font + 4}, true);
    dl->AddText({lx + font, ly}, kLabel, text.c_str());
    dl->PopClipRect();
  }
  if (r.points.size() > legend.size()) {
    ImGui::SetCursorScreenPos({lx, top + static_cast<float>(legend.size()) * (font + 4)});
    ImGui::TextDisabled("+%zu more", r.points.size() - legend.size());
  }
  ImGui::SetCursorScreenPos({left, top});
  ImGui::InvisibleButton("##plot", {w, h});
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (const auto i = pick_point(r, map, m.x, m.y, 10.0f)) {
      const RooflinePoint& p = r.points[*i];
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(font * 45);
      ImGui::TextUnformatted(p.name.c_str());
      ImGui::PopTextWrapPos();
      ImGui::Separator();
      ImGui::Text("intensity  %.3g FLOPs/byte", p.intensity);
      ImGui::Text("achieved   %.3g TFLOP/s", p.tflops);
      double best = 0;
      for (const ComputeCeiling& c : r.compute) {
        if (p.precision.empty() || c.precision == p.precision)
          best = std::max(best, r.attainable_tflops(p.intensity, c.tflops));
      }
      if (best > 0) ImGui::Text("attainable %.3g TFLOP/s (%.0f%%)", best, 100.0 * p.tflops / best);
      ImGui::Text("time       %s", format_duration(p.total_ns).c_str());
      if (!p.precision.empty()) ImGui::Text("precision  %s", p.precision.c_str());
      const std::string& source = table.rows()[p.table_row].stats.flops_source;
      if (!source.empty()) ImGui::Text("FLOPs from %s", source.c_str());
      ImGui::EndTooltip();
      if (ImGui::IsItemClicked()) highlight_and_jump(s, table.query(), p.name);
    }
  }
}

void RooflineWindow::draw(AppState& s, const OpTable* table, std::uint64_t version, bool full,
                          ImVec2 full_pos, ImVec2 full_size) {
  if (!s.show_roofline && !full) return;
  if (table && (!roofline_ || version != built_version_)) {
    roofline_ = build_roofline(s.trace_list(), *table);
    built_version_ = version;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (full) {
    ImGui::SetNextWindowPos(full_pos);
    ImGui::SetNextWindowSize(full_size);
    ImGui::SetNextWindowBgAlpha(1.0f);  // nothing behind it shows through
  } else {
    ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x * 0.4f, vp->WorkPos.y + 40},
                            ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize({vp->WorkSize.x * 0.55f, vp->WorkSize.y * 0.6f},
                             ImGuiCond_FirstUseEver);
  }
  const ImGuiWindowFlags flags =
      full ? ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse : 0;
  if (ImGui::Begin("Roofline###roofline", full ? nullptr : &s.show_roofline, flags)) {
    if (!table || !roofline_) {
      ImGui::TextDisabled(s.empty() ? "No trace open." : "Building the FLOP/s table...");
    } else {
      draw_plot(s, *table);
    }
  }
  ImGui::End();
}

}  // namespace flopline::viewer
