#include "diff_window.h"

#include <cstdio>
#include <string>

#include "core/viewport.h"

namespace flopline::viewer {
namespace {

ImVec4 change_color(trace::DiffKind k) {
  switch (k) {
    case trace::DiffKind::kSame:
      return {0.6f, 0.62f, 0.66f, 1.0f};
    case trace::DiffKind::kFaster:
    case trace::DiffKind::kLessWork:
    case trace::DiffKind::kFewerCalls:
    case trace::DiffKind::kRemoved:
      return {0.45f, 0.85f, 0.5f, 1.0f};
    case trace::DiffKind::kPrecisionChanged:
      return {1.0f, 0.75f, 0.3f, 1.0f};
    default:
      return {1.0f, 0.5f, 0.45f, 1.0f};
  }
}

std::string side_line(const char* which, const DiffSideSummary& side) {
  return std::string(which) + ": " + side.given + " (" + std::to_string(side.files) + " file" +
         (side.files == 1 ? "" : "s") + ", " + format_duration(side.total_ns) + ")";
}

void draw_table(AppState& s, const std::vector<std::size_t>& shown) {
  const DiffTable& d = *s.diff;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Hideable;
  // Each column's user id is its index here, which the sort specs give back.
  const std::vector<const trace::DiffColumn*> columns = trace::diff_people_columns();
  const int ncol = static_cast<int>(columns.size());
  if (!ImGui::BeginTable("##diff", ncol, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (int c = 0; c < ncol; ++c) {
    const trace::DiffColumn& col = *columns[static_cast<std::size_t>(c)];
    ImGuiTableColumnFlags cf = ImGuiTableColumnFlags_PreferSortDescending;
    if (col.field->by_magnitude) cf |= ImGuiTableColumnFlags_DefaultSort;
    if (col.field->is_name) cf |= ImGuiTableColumnFlags_PreferSortAscending;
    ImGui::TableSetupColumn(col.title.c_str(), cf, 0.0f, static_cast<ImGuiID>(c));
  }
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsDirty && specs->SpecsCount > 0) {
      const auto id = static_cast<std::size_t>(specs->Specs[0].ColumnUserID);
      if (id < columns.size()) s.diff_sort = columns[id];
      s.diff_descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    specs->SpecsDirty = false;
  }
  const OpTableQuery query = diff_row_query(d.by);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(shown.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const trace::DiffRow& row = d.rows[shown[static_cast<std::size_t>(i)]];
      ImGui::TableNextRow();
      ImGui::PushID(i);
      for (int c = 0; c < ncol; ++c) {
        if (!ImGui::TableSetColumnIndex(c)) continue;
        const trace::DiffColumn& col = *columns[static_cast<std::size_t>(c)];
        const std::string text = diff_cell_text(row, col);
        if (col.id == "change") {
          // The row's click target: lights the name's instances in both runs.
          const bool lit = s.selection.highlighted_name == row.name;
          ImGui::PushStyleColor(ImGuiCol_Text, change_color(row.kind));
          if (ImGui::Selectable(text.c_str(), lit, ImGuiSelectableFlags_SpanAllColumns))
            highlight_and_jump(s, query, row.name);
          ImGui::PopStyleColor();
        } else {
          ImGui::TextUnformatted(text.c_str());
          if (col.field->is_name && ImGui::IsItemHovered() && text.size() > 40)
            ImGui::SetTooltip("%s", text.c_str());
        }
      }
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

void draw_contents(AppState& s) {
  const DiffTable& d = *s.diff;
  ImGui::TextUnformatted(side_line("A", d.a).c_str());
  ImGui::TextUnformatted(side_line("B", d.b).c_str());
  const double ta = static_cast<double>(d.a.total_ns);
  const double tb = static_cast<double>(d.b.total_ns);
  if (ta > 0) {
    ImGui::Text(
        "%s; B against A: %+.1f%% in all",
        d.by == trace::GroupBy::kName ? "Kernels, copies and sets by name" : "Operators by name",
        100.0 * (tb - ta) / ta);
  }
  char filter[256];
  std::snprintf(filter, sizeof filter, "%s", s.diff_filter.c_str());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
  if (ImGui::InputTextWithHint("##diff_filter", "filter names or changes", filter, sizeof filter))
    s.diff_filter = filter;
  const std::vector<std::size_t> shown = diff_rows_shown(s);
  ImGui::SameLine();
  ImGui::TextDisabled(
      "%zu of %zu rows; other work: FLOPs per call beyond 1%%, another speed: "
      "time per call beyond 2%% (docs/DIFF.md)",
      shown.size(), d.rows.size());
  draw_table(s, shown);
}

}  // namespace

std::vector<std::size_t> diff_rows_shown(const AppState& s) {
  if (!s.diff) return {};
  return diff_view(*s.diff, s.diff_filter, s.diff_sort, s.diff_descending);
}

void draw_diff_window(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size) {
  if (!s.diff || (!s.show_diff && !full)) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (full) {
    ImGui::SetNextWindowPos(full_pos);
    ImGui::SetNextWindowSize(full_size);
    ImGui::SetNextWindowBgAlpha(1.0f);
  } else {
    ImGui::SetNextWindowPos({vp->WorkPos.x + 30, vp->WorkPos.y + vp->WorkSize.y * 0.4f},
                            ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize({vp->WorkSize.x - 60, vp->WorkSize.y * 0.55f}, ImGuiCond_FirstUseEver);
  }
  const ImGuiWindowFlags flags =
      full ? ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse : 0;
  bool* open = full ? nullptr : &s.show_diff;
  if (ImGui::Begin("Diff: A -> B###diff", open, flags)) draw_contents(s);
  ImGui::End();
}

}  // namespace flopline::viewer
