#include "timeline_view.h"

#include <algorithm>
#include <cmath>

#include "core/hit_test.h"
#include "core/lod.h"
#include "counter_track_view.h"
#include "slice_tooltip.h"
#include "timeline_canvas.h"
#include "timeline_ruler.h"
#include "ui_colors.h"

namespace flopline::viewer {
namespace {

using Canvas = TimelineCanvas;

constexpr float kMinLabelPx = 24.0f;  // narrower slices get no text
constexpr float kHeaderIndent = 6.0f;

float row_mid_y(const AppState& s, const Canvas& c, const SliceHandle& h) {
  const std::uint32_t r = s.layout.layout_row_of(h.trace, h.ref.track, h.ref.row);
  if (r == trace::kNone || !s.layout.rows()[r].visible) return NAN;
  const LayoutRow& row = s.layout.rows()[r];
  return c.origin_y + row.y + row.height * 0.5f;
}

// --- headers ---------------------------------------------------------------------

void draw_disclosure(ImDrawList* dl, float x, float y, float size, bool open, ImU32 col) {
  if (open) {
    dl->AddTriangleFilled({x, y}, {x + size, y}, {x + size * 0.5f, y + size * 0.8f}, col);
  } else {
    dl->AddTriangleFilled({x, y}, {x + size * 0.8f, y + size * 0.5f}, {x, y + size}, col);
  }
}

void draw_headers(const AppState& s, const Canvas& c) {
  const LayoutParams& p = s.layout.params();
  const float font = ImGui::GetFontSize();
  char buf[64];
  for (const LayoutProcess& proc : s.layout.processes()) {
    if (proc.y > c.content_y1 || proc.y + proc.height < c.content_y0) continue;
    const float y = c.origin_y + proc.y;
    c.dl->AddRectFilled({c.x0, y}, {c.x1, y + p.process_header_px}, kProcessHeaderBg);
    const float ty = y + (p.process_header_px - font) * 0.5f;
    draw_disclosure(c.dl, c.x0 + kHeaderIndent, ty + 2, font - 4, !proc.collapsed, kHeaderText);
    c.dl->AddText({c.x0 + kHeaderIndent + font + 2, ty}, kHeaderText, proc.name.c_str());
    std::snprintf(buf, sizeof buf, "%u tracks", proc.track_count);
    const float w = ImGui::CalcTextSize(buf).x;
    c.dl->AddText({c.x1 - w - 8, ty}, kHeaderDimText, buf);
  }
  for (const LayoutTrack& t : s.layout.tracks()) {
    if (!t.visible || t.y > c.content_y1 || t.y + t.height < c.content_y0) continue;
    const float y = c.origin_y + t.y;
    const float ty = y + (p.track_header_px - font) * 0.5f;
    draw_disclosure(c.dl, c.x0 + kHeaderIndent + 8, ty + 3, font - 6, !t.collapsed, kHeaderDimText);
    if (t.is_counter()) {
      std::snprintf(buf, sizeof buf, "  (%llu samples)",
                    static_cast<unsigned long long>(t.point_count));
    } else {
      std::snprintf(buf, sizeof buf, "  (%llu)", static_cast<unsigned long long>(t.slice_count));
    }
    const ImVec2 name_pos{c.x0 + kHeaderIndent + 8 + font, ty};
    c.dl->AddText(name_pos, kTrackHeaderText, t.name.c_str());
    const float nw = ImGui::CalcTextSize(t.name.c_str()).x;
    c.dl->AddText({name_pos.x + nw, ty}, kHeaderDimText, buf);
  }
}

// The process or track whose header lies at layout y, for collapse clicks.
struct HeaderHit {
  bool process = false;
  std::uint32_t index = trace::kNone;
};

HeaderHit header_at(const AppState& s, float y) {
  const LayoutParams& p = s.layout.params();
  for (std::uint32_t i = 0; i < s.layout.processes().size(); ++i) {
    const LayoutProcess& proc = s.layout.processes()[i];
    if (y >= proc.y && y < proc.y + p.process_header_px) return {.process = true, .index = i};
  }
  for (std::uint32_t i = 0; i < s.layout.tracks().size(); ++i) {
    const LayoutTrack& t = s.layout.tracks()[i];
    if (t.visible && y >= t.y && y < t.y + p.track_header_px) return {.process = false, .index = i};
  }
  return {};
}

// --- slices ----------------------------------------------------------------------

bool block_has_name(std::span<const trace::Slice> row, const DrawItem& it, trace::StringId id) {
  // A merged block may hide highlighted slices; look inside small blocks only, so the
  // cost per frame stays bounded.
  if (it.count > 64) return false;
  for (std::uint32_t i = it.first; i < it.first + it.count && i < row.size(); ++i) {
    if (row[i].name == id || row[i].cat == id) return true;
  }
  return false;
}

void draw_label(AppState& s, const Canvas& c, std::uint32_t trace, const trace::Slice& sl, float x0,
                float x1, float y0, float y1) {
  const std::string& label = display_name(s, trace, sl.name);
  if (label.empty()) return;
  const char* b = label.data();
  const char* e = b + label.size();
  const float text_w = ImGui::CalcTextSize(b, e).x;
  const float vx0 = std::max(x0, c.x0);
  const float vx1 = std::min(x1, c.x1);
  const float avail = vx1 - vx0 - 4;
  if (avail < 8) return;
  const float ty = y0 + (y1 - y0 - ImGui::GetFontSize()) * 0.5f;
  const float tx = text_w <= avail ? vx0 + (vx1 - vx0 - text_w) * 0.5f : vx0 + 2;
  const ImVec4 clip(vx0 + 1, y0, vx1 - 1, y1);
  c.dl->AddText(nullptr, 0.0f, {tx, ty}, kSliceText, b, e, 0.0f, &clip);
}

void draw_rows(AppState& s, const Canvas& c, std::vector<DrawItem>& items) {
  const TraceList traces = s.trace_list();
  const bool highlighting = s.selection.highlighted_name.has_value();
  char buf[32];
  for (std::uint32_t ri : s.layout.visible_rows_in(c.content_y0, c.content_y1)) {
    const LayoutRow& r = s.layout.rows()[ri];
    const trace::Track& track = traces[r.trace]->tracks[r.track];
    const std::span<const trace::Slice> row = track.rows[r.row];
    items.clear();
    visible_items(row, s.viewport, items);
    s.visible_items += items.size();
    const float y0 = c.origin_y + r.y;
    const float y1 = y0 + r.height;
    const ColorTable& colors = s.colors[r.trace];
    const trace::StringId hl =
        highlighting && r.trace < s.highlight_ids.size() ? s.highlight_ids[r.trace] : trace::kNone;
    for (const DrawItem& it : items) {
      const trace::Slice& first = row[it.first];
      std::uint32_t col = colors.of_slice(first, s.color_by);
      if (it.merged()) col = darken(col, 0.25f);
      if (highlighting) {
        const bool lit =
            it.merged() ? block_has_name(row, it, hl) : (first.name == hl || first.cat == hl);
        if (!lit) col = darken(col, 0.7f);
      }
      const float w = it.x1 - it.x0;
      // A one-pixel gap between wide neighbours keeps slices of one colour apart.
      const float x1 = w > 4 ? it.x1 - 1 : it.x1;
      c.dl->AddRectFilled({it.x0, y0}, {x1, y1}, col);
      if (w < kMinLabelPx) continue;
      if (!it.merged()) {
        draw_label(s, c, r.trace, first, it.x0, x1, y0, y1);
      } else if (w >= 40) {
        const std::string label = merged_block_label(it.count);
        std::snprintf(buf, sizeof buf, "%s", label.c_str());
        const float tw = ImGui::CalcTextSize(buf).x;
        if (tw + 4 < w) {
          c.dl->AddText({it.x0 + (w - tw) * 0.5f, y0 + (r.height - ImGui::GetFontSize()) * 0.5f},
                        kMergedText, buf);
        }
      }
    }
  }
}

// Outline of one slice in its row (selection, search match, hover).
void outline_slice(AppState& s, const Canvas& c, const SliceHandle& h, ImU32 col, float thickness,
                   bool fill) {
  const std::uint32_t r = s.layout.layout_row_of(h.trace, h.ref.track, h.ref.row);
  if (r == trace::kNone || !s.layout.rows()[r].visible) return;
  const LayoutRow& row = s.layout.rows()[r];
  const trace::Slice& sl = slice_of(s.trace_list(), h);
  float x0 = static_cast<float>(s.viewport.time_to_x(sl.start));
  float x1 = static_cast<float>(s.viewport.time_to_x(sl.end()));
  if (x1 < c.x0 || x0 > c.x1) return;
  x0 = std::max(x0, c.x0 - 2);
  x1 = std::min(std::max(x1, x0 + 3), c.x1 + 2);
  const float y0 = c.origin_y + row.y;
  const float y1 = y0 + row.height;
  if (fill) {
    const std::uint32_t base = s.colors[h.trace].of_slice(sl, s.color_by);
    c.dl->AddRectFilled({x0, y0}, {x1, y1}, lighten(base, 0.55f));
    if (x1 - x0 >= kMinLabelPx) draw_label(s, c, h.trace, sl, x0, x1, y0, y1);
  }
  c.dl->AddRect({x0 - 1, y0 - 1}, {x1 + 1, y1 + 1}, col, 0.0f, 0, thickness);
}

void draw_arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col) {
  dl->AddLine(a, b, col, 2.0f);
  const float dx = b.x - a.x;
  const float dy = b.y - a.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  if (len < 1) return;
  const float ux = dx / len, uy = dy / len;
  const float size = 9;
  const ImVec2 base{b.x - ux * size, b.y - uy * size};
  dl->AddTriangleFilled(b, {base.x - uy * size * 0.5f, base.y + ux * size * 0.5f},
                        {base.x + uy * size * 0.5f, base.y - ux * size * 0.5f}, col);
}

void draw_flows(const AppState& s, const Canvas& c) {
  const TraceList traces = s.trace_list();
  for (const FlowLink& f : s.selection.flows) {
    const float ya = row_mid_y(s, c, f.from);
    const float yb = row_mid_y(s, c, f.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    const trace::Slice& from = slice_of(traces, f.from);
    const trace::Slice& to = slice_of(traces, f.to);
    // From the end of the launch call to the start of the kernel.
    const auto xa = static_cast<float>(s.viewport.time_to_x(from.end()));
    const auto xb = static_cast<float>(s.viewport.time_to_x(to.start));
    draw_arrow(c.dl, {xa, ya}, {xb, yb}, kFlowArrow);
  }
}

void draw_time_grid(const AppState& s, const Canvas& c) {
  const RulerTicks ticks = ruler_ticks(s.viewport, s.begin_ns);
  for (const RulerTick& t : ticks.ticks) {
    if (!t.major) continue;
    const auto x = static_cast<float>(t.x_px);
    c.dl->AddLine({x, c.top}, {x, c.bottom}, kGridLine);
  }
}

void draw_range_overlay(const AppState& s, const Canvas& c) {
  if (!s.selection.range) return;
  const auto x0 = static_cast<float>(s.viewport.time_to_x(s.selection.range->begin_ns));
  const auto x1 = static_cast<float>(s.viewport.time_to_x(s.selection.range->end_ns));
  const float a = std::max(x0, c.x0), b = std::min(x1, c.x1);
  if (b <= a) return;
  c.dl->AddRectFilled({a, c.top}, {b, c.bottom}, kRangeFill);
  c.dl->AddLine({x0, c.top}, {x0, c.bottom}, kRangeEdge);
  c.dl->AddLine({x1, c.top}, {x1, c.bottom}, kRangeEdge);
}

// --- input -----------------------------------------------------------------------

void zoom_and_scroll_with_wheel(AppState& s, float mouse_x) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.MouseWheel != 0) {
    if (io.KeyShift) {
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 3 * s.layout.params().row_px);
    } else {
      s.viewport.zoom_around(std::pow(1.25, static_cast<double>(io.MouseWheel)), mouse_x);
    }
  }
  if (io.MouseWheelH != 0) s.viewport.pan_pixels(io.MouseWheelH * 40);
}

void click(AppState& s, const Canvas& c, ImVec2 mouse) {
  const float y = mouse.y - c.origin_y;
  const HeaderHit header = header_at(s, y);
  if (header.index != trace::kNone) {
    if (header.process) {
      s.layout.toggle_process(header.index);
    } else {
      s.layout.toggle_track(header.index);
    }
    return;
  }
  const auto hit = hit_test(s.trace_list(), s.layout, s.viewport, mouse.x, y);
  if (hit) {
    select_slice(s, hit->slice, false);
    s.scroll_to.reset();  // it was clicked: it is on screen already
  } else {
    s.selection.clear_slice();
  }
}

void handle_mouse(AppState& s, const Canvas& c, bool hovered) {
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  if (hovered) zoom_and_scroll_with_wheel(s, mouse.x);
  TimelineUi& ui = s.ui;
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    ui.dragging = true;
    ui.drag_moved = false;
    ui.press_x = mouse.x;
    ui.press_y = mouse.y;
  }
  if (ui.dragging) {
    if (std::fabs(mouse.x - ui.press_x) > 3 || std::fabs(mouse.y - ui.press_y) > 3)
      ui.drag_moved = true;
    if (ui.drag_moved && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
      s.viewport.pan_pixels(io.MouseDelta.x);
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
    }
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      if (!ui.drag_moved) click(s, c, mouse);
      ui.dragging = false;
    }
  }
  if (hovered && !ui.dragging && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) &&
      s.selection.has_slice()) {
    fit_selection_or_all(s);
  }
}

void hover(AppState& s, const Canvas& c) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.y < c.top || mouse.y >= c.bottom || mouse.x < c.x0 || mouse.x >= c.x1) return;
  const auto hit = hit_test(s.trace_list(), s.layout, s.viewport, mouse.x, mouse.y - c.origin_y);
  if (!hit) {
    hover_counter_track(s, c, mouse);
    return;
  }
  const LayoutRow& row = s.layout.rows()[hit->layout_row];
  const float y0 = c.origin_y + row.y;
  c.dl->AddRect({hit->item.x0 - 1, y0 - 1}, {hit->item.x1 + 1, y0 + row.height + 1}, kHoverOutline);
  show_slice_tooltip(s, hit->slice, hit->item.count);
}

}  // namespace

void draw_timeline(AppState& s, ImVec2 pos, ImVec2 size) {
  s.visible_items = 0;
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  s.viewport.x0_px = pos.x;
  s.viewport.width_px = std::max(1.0f, size.x - scrollbar);
  if (s.fit_pending) {
    s.viewport.fit(s.begin_ns, s.end_ns);
    s.fit_pending = false;
  }

  ImGui::SetCursorScreenPos(pos);
  draw_ruler(s, pos, {size.x - scrollbar, kRulerHeight});

  const ImVec2 tracks_pos{pos.x, pos.y + kRulerHeight};
  const ImVec2 tracks_size{size.x, std::max(1.0f, size.y - kRulerHeight)};
  ImGui::SetCursorScreenPos(tracks_pos);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
  // The tracks' background is the cleared framebuffer (gl_window.cc), not a quad.
  ImGui::BeginChild(
      "##tracks", tracks_size, false,
      ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBackground);
  if (s.scroll_to) {
    ImGui::SetScrollY(*s.scroll_to);
    s.scroll_to.reset();
  }
  s.scroll_y = ImGui::GetScrollY();
  s.ui.tracks_height = tracks_size.y;

  Canvas c;
  c.dl = ImGui::GetWindowDrawList();
  c.x0 = pos.x;
  c.x1 = pos.x + s.viewport.width_px;
  c.top = tracks_pos.y;
  c.bottom = tracks_pos.y + tracks_size.y;
  c.origin_y = tracks_pos.y - s.scroll_y;
  c.content_y0 = s.scroll_y;
  c.content_y1 = s.scroll_y + tracks_size.y;
  s.ui.origin_y = c.origin_y;
  // The content is as tall as the layout, so ImGui's scrollbar covers it.
  ImGui::Dummy({1.0f, std::max(s.layout.total_height(), 1.0f)});

  const bool hovered = ImGui::IsWindowHovered();
  s.ui.cursor_x = hovered ? ImGui::GetIO().MousePos.x : -1;

  c.dl->PushClipRect({c.x0, c.top}, {c.x1, c.bottom}, true);
  draw_time_grid(s, c);
  draw_rows(s, c, s.ui.items);
  draw_counter_tracks(s, c);
  draw_headers(s, c);
  draw_range_overlay(s, c);
  if (s.search_cursor && *s.search_cursor < s.search.matches().size()) {
    outline_slice(s, c, s.search.matches()[*s.search_cursor].slice, kSearchOutline, 2.0f, false);
  }
  if (s.selection.has_slice())
    outline_slice(s, c, s.selection.slice, kSelectionOutline, 2.0f, true);
  draw_flows(s, c);
  handle_mouse(s, c, hovered);
  if (hovered && !s.ui.dragging) hover(s, c);
  c.dl->PopClipRect();

  ImGui::EndChild();
  ImGui::PopStyleVar();
}

}  // namespace flopline::viewer
