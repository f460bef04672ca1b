#include "rank_window.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/si_format.h"
#include "core/viewport.h"
#include "ui_colors.h"

namespace flopline::viewer {
namespace {

// compute, communication, memory, idle
constexpr ImU32 kPartColors[kBarParts] = {IM_COL32(90, 180, 100, 255), IM_COL32(235, 140, 50, 255),
                                          IM_COL32(80, 140, 230, 255), IM_COL32(95, 98, 108, 255)};

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

void draw_legend() {
  for (int p = 0; p < kBarParts; ++p) {
    if (p > 0) ImGui::SameLine();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(at, {at.x + h, at.y + h},
                                              kPartColors[static_cast<std::size_t>(p)]);
    ImGui::Dummy({h, h});
    ImGui::SameLine();
    ImGui::TextUnformatted(bar_part_name(p));
  }
}

// The bar in the current cell; true when clicked.
bool draw_bar(const RankBar& bar, int id) {
  const float width = std::max(60.0f, ImGui::GetContentRegionAvail().x);
  const float height = ImGui::GetTextLineHeight();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  const bool clicked = ImGui::InvisibleButton("##bar", {width, height});
  ImGui::PopID();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const auto segs = bar_segments(bar.shares, at.x, width);
  for (int p = 0; p < kBarParts; ++p) {
    const BarSegment& g = segs[static_cast<std::size_t>(p)];
    if (g.x1 > g.x0)
      dl->AddRectFilled({g.x0, at.y}, {g.x1, at.y + height},
                        kPartColors[static_cast<std::size_t>(p)]);
  }
  if (ImGui::IsItemHovered()) {
    dl->AddRect(at, {at.x + width, at.y + height}, kHoverOutline);
    const int part = bar_part_at(bar.shares, at.x, width, ImGui::GetIO().MousePos.x);
    if (part >= 0) {
      const trace::DeviceBreakdown& b = bar.breakdown;
      ImGui::SetTooltip("%s, %s: %s (%s of %s)\nclick: show this GPU's window", bar.label.c_str(),
                        bar_part_name(part), format_duration(bar_part_ns(b, part)).c_str(),
                        percent(part == 0   ? bar.shares.compute
                                : part == 1 ? bar.shares.communication
                                : part == 2 ? bar.shares.memory
                                            : bar.shares.idle)
                            .c_str(),
                        format_duration(b.window_ns()).c_str());
    }
  }
  return clicked;
}

const RankWaitRow* waits_of(const RankSummary& r, std::uint32_t trace) {
  for (const RankWaitRow& w : r.wait_rows) {
    if (w.trace == trace) return &w;
  }
  return nullptr;
}

void draw_bars(AppState& s) {
  const RankSummary& r = s.rank_summary;
  const bool waits = r.waits.has_value();
  const int ncol = waits ? 9 : 7;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingFixedFit;
  const float rows_h = ImGui::GetTextLineHeightWithSpacing() *
                       (static_cast<float>(std::min<std::size_t>(r.bars.size(), 12)) + 1.5f);
  if (!ImGui::BeginTable("##bars", ncol, flags, {0, rows_h})) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Rank / GPU");
  ImGui::TableSetupColumn("Breakdown (click: go there)", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("Compute");
  ImGui::TableSetupColumn("Comm");
  ImGui::TableSetupColumn("Memory");
  ImGui::TableSetupColumn("Idle");
  ImGui::TableSetupColumn("Window");
  if (waits) {
    ImGui::TableSetupColumn("Wait at collectives");
    ImGui::TableSetupColumn("Last to arrive");
  }
  ImGui::TableHeadersRow();
  std::uint32_t previous_trace = trace::kNone;
  for (std::size_t i = 0; i < r.bars.size(); ++i) {
    const RankBar& bar = r.bars[i];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(bar.label.c_str());
    if (ImGui::IsItemHovered() && bar.trace < s.files.size())
      ImGui::SetTooltip("%s", s.files[bar.trace]->path.c_str());
    ImGui::TableSetColumnIndex(1);
    if (draw_bar(bar, static_cast<int>(i))) jump_to(s, jump_to_bar(bar, s.trace_list(), s.layout));
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(percent(bar.shares.compute).c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(percent(bar.shares.communication).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(percent(bar.shares.memory).c_str());
    ImGui::TableSetColumnIndex(5);
    ImGui::TextUnformatted(percent(bar.shares.idle).c_str());
    ImGui::TableSetColumnIndex(6);
    ImGui::TextUnformatted(format_duration(bar.breakdown.window_ns()).c_str());
    // A rank's waits once, on its first GPU's row.
    const RankWaitRow* w = waits && bar.trace != previous_trace ? waits_of(r, bar.trace) : nullptr;
    previous_trace = bar.trace;
    if (w != nullptr) {
      ImGui::TableSetColumnIndex(7);
      ImGui::TextUnformatted(format_duration(w->waits.wait_ns).c_str());
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip(
            "%llu collectives matched, %s in their kernels, of it %s waiting for the "
            "last rank to arrive",
            static_cast<unsigned long long>(w->waits.matched),
            format_duration(w->waits.kernel_ns).c_str(), format_duration(w->waits.wait_ns).c_str());
      }
      ImGui::TableSetColumnIndex(8);
      if (w->waited_for) {
        ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "%llu (others wait for it)",
                           static_cast<unsigned long long>(w->waits.last_arrivals));
      } else {
        ImGui::Text("%llu", static_cast<unsigned long long>(w->waits.last_arrivals));
      }
    }
  }
  ImGui::EndTable();
}

void draw_longest(AppState& s) {
  const RankSummary& r = s.rank_summary;
  const trace::CollectiveWaits& w = *r.waits;
  auto name_of = [&](std::uint32_t trace) {
    for (const RankWaitRow& row : r.wait_rows) {
      if (row.trace == trace) return row.label;
    }
    return std::string("?");
  };
  if (w.waited_for && *w.waited_for < r.wait_rows.size()) {
    const RankWaitRow& last = r.wait_rows[*w.waited_for];
    ImGui::Text("The others wait for %s: last to arrive at %llu of %llu collectives.",
                last.label.c_str(), static_cast<unsigned long long>(last.waits.last_arrivals),
                static_cast<unsigned long long>(w.collectives));
  } else {
    ImGui::Text("%llu collectives matched across ranks.",
                static_cast<unsigned long long>(w.collectives));
  }
  if (w.unmatched > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("(%llu NCCL kernels not matched)",
                        static_cast<unsigned long long>(w.unmatched));
  }
  ImGui::TextDisabled("Collectives with the longest waits (click: show the waiting kernel)");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##longest", 7, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("Collective");
  ImGui::TableSetupColumn("Message");
  ImGui::TableSetupColumn("Longest wait");
  ImGui::TableSetupColumn("Waiting");
  ImGui::TableSetupColumn("Last to arrive");
  ImGui::TableSetupColumn("All ranks' wait");
  ImGui::TableSetupColumn("At");
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(r.longest.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const CollectiveWaitRow& c = r.longest[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(i);
      if (ImGui::Selectable(c.label.c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
        jump_to(s, jump_to_collective(r, c, s.trace_list(), s.layout));
      ImGui::PopID();
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%sB", format_si(static_cast<double>(c.message_bytes)).c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_duration(c.longest_wait_ns).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(name_of(c.longest_waiter).c_str());
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(name_of(c.last_to_arrive).c_str());
      ImGui::TableSetColumnIndex(5);
      ImGui::TextUnformatted(format_duration(c.total_wait_ns).c_str());
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(format_duration(c.begin_ns - s.begin_ns).c_str());
    }
  }
  ImGui::EndTable();
}

void draw_contents(AppState& s) {
  const RankSummary& r = s.rank_summary;
  if (r.bars.empty()) {
    ImGui::TextDisabled("No GPU work (kernels, copies, sets on a GPU's streams) in the traces.");
    return;
  }
  ImGui::TextDisabled(
      "Each GPU from its first to its last work; communication and memory: the part not under "
      "computation (docs/STATS.md, \"Time breakdown\").");
  draw_legend();
  draw_bars(s);
  if (!r.waits) {
    ImGui::TextDisabled(
        "Waits at collectives: need NCCL kernels with communicators in two or "
        "more ranks' traces.");
    return;
  }
  ImGui::Separator();
  draw_longest(s);
}

}  // namespace

void draw_rank_window(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size) {
  if (!s.show_ranks && !full) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (full) {
    ImGui::SetNextWindowPos(full_pos);
    ImGui::SetNextWindowSize(full_size);
    ImGui::SetNextWindowBgAlpha(1.0f);
  } else {
    ImGui::SetNextWindowPos({vp->WorkPos.x + 40, vp->WorkPos.y + vp->WorkSize.y * 0.35f},
                            ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize({vp->WorkSize.x * 0.7f, vp->WorkSize.y * 0.55f},
                             ImGuiCond_FirstUseEver);
  }
  const ImGuiWindowFlags flags =
      full ? ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse : 0;
  bool* open = full ? nullptr : &s.show_ranks;
  if (ImGui::Begin("Rank summary###ranks", open, flags)) draw_contents(s);
  ImGui::End();
}

}  // namespace flopline::viewer
