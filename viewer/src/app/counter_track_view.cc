#include "counter_track_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "core/colors.h"
#include "core/counter_format.h"
#include "core/viewport.h"
#include "ui_colors.h"

namespace flopline::viewer {
namespace {

constexpr ImU32 kCounterBandBg = IM_COL32(255, 255, 255, 10);
constexpr ImU32 kCounterLabelBg = IM_COL32(24, 25, 28, 200);
constexpr float kBandPad = 2.0f;  // between the band's edges and the graph

// One series as the drawing needs it; null when the layout names no series of s.
struct Series {
  std::span<const trace::CounterPoint> points;
  const CounterIndex* index = nullptr;
  std::string_view cat;
  std::string unit;
  explicit operator bool() const { return index != nullptr; }
};

Series series_of(const AppState& s, const LayoutTrack& lt) {
  Series out;
  if (lt.trace >= s.files.size()) return out;
  const LoadedFile& f = *s.files[lt.trace];
  if (lt.counter >= f.trace.counters.size() || lt.counter >= f.counter_index.size()) return out;
  const trace::CounterSeries& c = f.trace.counters[lt.counter];
  out.points = c.points;
  out.index = &f.counter_index[lt.counter];
  out.cat = f.trace.str(c.cat);
  out.unit = counter_unit(lt.name);
  return out;
}

// The graph's band on screen.
struct Band {
  float top = 0;
  float height = 0;
  float bottom() const { return top + height; }
};

Band band_of(const TimelineCanvas& c, const LayoutTrack& lt) {
  return {c.origin_y + lt.graph_y + kBandPad, std::max(1.0f, lt.graph_height - 2 * kBandPad)};
}

ImU32 with_alpha(std::uint32_t rgba, std::uint8_t alpha) {
  return (rgba & 0x00ffffffu) | (static_cast<std::uint32_t>(alpha) << 24);
}

void draw_graph(ImDrawList* dl, std::span<const CounterItem> items, const CounterScale& scale,
                const Band& b, std::uint32_t color) {
  const ImU32 fill = with_alpha(color, 90);
  const ImU32 line = with_alpha(color, 255);
  const float base = scale.y_of(0, b.top, b.height);
  float prev_y = -1;
  for (const CounterItem& it : items) {
    if (it.values.empty) {
      prev_y = -1;
      continue;
    }
    const float y_max = scale.y_of(it.values.max, b.top, b.height);
    const float y_min = scale.y_of(it.values.min, b.top, b.height);
    // Filled from the zero line to the farthest value on each side of it.
    if (y_max < base) dl->AddRectFilled({it.x0, y_max}, {it.x1, base}, fill);
    if (y_min > base) dl->AddRectFilled({it.x0, base}, {it.x1, y_min}, fill);
    if (it.column()) {
      // Every sample in this pixel column: a solid bar from the lowest to the highest.
      dl->AddRectFilled({it.x0, y_max}, {it.x1, std::max(y_min, y_max + 1)}, line);
    } else {
      if (prev_y >= 0 && std::abs(prev_y - y_max) >= 1) {
        dl->AddRectFilled({it.x0, std::min(prev_y, y_max)},
                          {it.x0 + 1, std::max(prev_y, y_max) + 1}, line);
      }
      dl->AddRectFilled({it.x0, y_max}, {it.x1, y_max + 1}, line);
    }
    prev_y = scale.y_of(it.last, b.top, b.height);
  }
}

void draw_max_label(ImDrawList* dl, const TimelineCanvas& c, const Band& b, const ValueRange& shown,
                    const std::string& unit) {
  if (shown.empty) return;
  const std::string text = "max " + format_counter_value(shown.max, unit);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const float x = c.x1 - size.x - 8;
  const float y = b.top;
  dl->AddRectFilled({x - 3, y}, {x + size.x + 3, y + size.y}, kCounterLabelBg);
  dl->AddText({x, y}, kTrackHeaderText, text.c_str());
}

}  // namespace

void draw_counter_tracks(AppState& s, const TimelineCanvas& c) {
  s.counter_items = 0;
  for (std::uint32_t k : s.layout.counter_tracks()) {
    const LayoutTrack& lt = s.layout.tracks()[k];
    if (lt.graph_height <= 0 || lt.graph_y > c.content_y1 ||
        lt.graph_y + lt.graph_height < c.content_y0)
      continue;
    const Series series = series_of(s, lt);
    if (!series) continue;
    const Band b = band_of(c, lt);
    c.dl->AddRectFilled({c.x0, b.top}, {c.x1, b.bottom()}, kCounterBandBg);
    std::vector<CounterItem>& items = s.ui.counter_items;
    items.clear();
    visible_counter_items(series.points, *series.index, s.end_ns, s.viewport, items);
    s.counter_items += items.size();
    const ValueRange shown =
        visible_values(series.points, *series.index, s.viewport.t0_ns, s.viewport.t1_ns, s.end_ns);
    const CounterScale scale = counter_scale(shown, series.unit);
    draw_graph(c.dl, items, scale, b, color_for_key(lt.name));
    draw_max_label(c.dl, c, b, shown, series.unit);
  }
}

bool hover_counter_track(AppState& s, const TimelineCanvas& c, ImVec2 mouse) {
  const std::uint32_t k = s.layout.counter_track_at_y(mouse.y - c.origin_y);
  if (k == trace::kNone) return false;
  const LayoutTrack& lt = s.layout.tracks()[k];
  const Series series = series_of(s, lt);
  if (!series) return false;
  std::vector<CounterItem>& items = s.ui.counter_items;
  items.clear();
  visible_counter_items(series.points, *series.index, s.end_ns, s.viewport, items);
  const std::size_t i = counter_item_at(items, mouse.x);
  if (i >= items.size() || items[i].values.empty) return false;
  const CounterItem& it = items[i];
  const Band b = band_of(c, lt);
  const ValueRange shown =
      visible_values(series.points, *series.index, s.viewport.t0_ns, s.viewport.t1_ns, s.end_ns);
  const CounterScale scale = counter_scale(shown, series.unit);
  c.dl->AddLine({mouse.x, b.top}, {mouse.x, b.bottom()}, kHoverOutline);
  c.dl->AddCircleFilled({mouse.x, scale.y_of(it.last, b.top, b.height)}, 3.0f, kSelectionOutline);

  const std::string& unit = series.unit;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(lt.name.c_str());
  ImGui::TextDisabled("%s", s.layout.processes()[lt.layout_process].name.c_str());
  ImGui::Separator();
  if (!it.column()) {
    const std::size_t p = it.first;
    const std::int64_t from = series.points[p].ts;
    const std::int64_t to =
        p + 1 < series.points.size() ? series.points[p + 1].ts : std::max(s.end_ns, from);
    ImGui::Text("value  %s", format_counter_value(series.points[p].value, unit).c_str());
    ImGui::Text("from   %s to %s", format_duration(from - s.begin_ns).c_str(),
                format_duration(to - s.begin_ns).c_str());
  } else {
    ImGui::Text("%u samples in this pixel (zoom in to see each)", it.count);
    ImGui::Text("min    %s", format_counter_value(it.values.min, unit).c_str());
    ImGui::Text("max    %s", format_counter_value(it.values.max, unit).c_str());
    ImGui::Text("last   %s", format_counter_value(it.last, unit).c_str());
  }
  ImGui::Text("at     %s", format_duration(s.viewport.x_to_time(mouse.x) - s.begin_ns).c_str());
  if (!shown.empty) ImGui::Text("max in view  %s", format_counter_value(shown.max, unit).c_str());
  ImGui::Separator();
  ImGui::TextDisabled("%s", counter_source(series.cat).c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
  return true;
}

}  // namespace flopline::viewer
