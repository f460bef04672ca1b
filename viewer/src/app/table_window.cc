#include "table_window.h"

#include <imgui.h>
#include <imgui_internal.h>  // TableSetColumnWidth: ImGui 1.86 has no public setter

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/table_columns.h"
#include "core/viewport.h"
#include "short_name.h"
#include "slice_info.h"

namespace flopline::viewer {

bool grouping_combo(const char* id, trace::GroupBy* by) {
  const std::span<const trace::StatsGrouping> groupings = trace::stats_groupings();
  int i = 0;
  std::vector<std::string> labels;
  for (const trace::StatsGrouping& g : groupings) {
    if (g.by == *by) i = static_cast<int>(labels.size());
    labels.emplace_back(g.label);
  }
  std::vector<const char*> items;
  for (const std::string& l : labels) items.push_back(l.c_str());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11);
  if (!ImGui::Combo(id, &i, items.data(), static_cast<int>(items.size()))) return false;
  *by = groupings[static_cast<std::size_t>(i)].by;
  return true;
}

TableWindow::~TableWindow() {
  wait_idle();
}

void TableWindow::wait_idle() {
  if (job_.valid()) job_.wait();
}

TableWindow::Key TableWindow::wanted_key(const AppState& s) const {
  return {.generation = s.generation, .by = by_, .range = s.selection.range};
}

void TableWindow::start_build(const AppState& s, const Key& key) {
  OpTableQuery q;
  q.by = key.by;
  q.range = key.range;
  q.counted_coverage = counted_generation_ != key.generation;
  std::vector<const trace::Trace*> traces = s.traces;
  std::vector<const trace::OperatorIndex*> operators = s.operators;
  building_ = key;
  // Traces stay alive while this runs: the app calls wait_idle() before replacing them.
  job_ = std::async(std::launch::async,
                    [traces = std::move(traces), operators = std::move(operators), q] {
                      return build_op_table(TraceList(traces), q, OperatorList(operators));
                    });
}

void TableWindow::build_now(AppState& s) {
  take_grouping_request(s);
  wait_idle();
  if (job_.valid()) {
    table_ = job_.get();
    ++builds_;
    built_ = building_;
    keep_counted();
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Key key = wanted_key(s);
    OpTableQuery q;
    q.by = key.by;
    q.range = key.range;
    q.counted_coverage = counted_generation_ != key.generation;
    table_ = build_op_table(s.trace_list(), q, OperatorList(s.operators));
    ++builds_;
    built_ = key;
    keep_counted();
    // A trace without operators (NVTX ranges, annotations) shows its kernels.
    if (!table_->rows().empty() || by_ != trace::GroupBy::kOperator || auto_switched_) break;
    by_ = trace::GroupBy::kName;
    auto_switched_ = true;
  }
  refilter();
}

void TableWindow::take_grouping_request(AppState& s) {
  if (!s.table_by_request) return;
  by_ = *s.table_by_request;
  auto_switched_ = true;  // asked for: no switch to kernels when there are no operators
  s.table_by_request.reset();
}

void TableWindow::poll(AppState& s, bool needed) {
  take_grouping_request(s);
  if (job_.valid() && job_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    table_ = job_.get();
    ++builds_;
    built_ = building_;
    building_.reset();
    keep_counted();
    if (table_->rows().empty() && by_ == trace::GroupBy::kOperator && !auto_switched_ &&
        !s.selection.range) {
      by_ = trace::GroupBy::kName;
      auto_switched_ = true;
    }
    refilter();
  }
  if (s.empty() || !needed) return;
  const Key want = wanted_key(s);
  if (!job_.valid() && built_ != want) start_build(s, want);
}

void TableWindow::keep_counted() {
  if (!table_ || !built_ || !table_->counted()) return;
  counted_ = table_->counted();
  counted_generation_ = built_->generation;
}

void TableWindow::refilter() {
  ++version_;
  shown_ = table_ ? table_->filtered(filter_) : std::vector<std::size_t>{};
}

std::string TableWindow::csv() const {
  if (!table_) return "";
  return op_table_csv(*table_, shown_);
}

void TableWindow::draw_table(AppState& s) {
  const OpTable& t = *table_;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Hideable;
  // ImGui knows a column by its index in the schema, so saved widths and order stay
  // with their column when new ones are added.
  const std::span<const trace::StatsColumn> all = trace::stats_columns();
  const std::vector<const trace::StatsColumn*> columns = viewer_columns(all);
  const int ncol = static_cast<int>(columns.size());
  const float available = ImGui::GetContentRegionAvail().x;
  if (!ImGui::BeginTable("##ops", ncol, flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  if (row_names_build_ != builds_) {
    std::vector<std::string> full;
    full.reserve(t.rows().size());
    for (const OpRow& r : t.rows()) full.push_back(r.stats.name);
    const std::vector<std::string> shown =
        table_row_names(full, t.query().by == trace::GroupBy::kName);
    row_names_.clear();
    for (std::size_t r = 0; r < full.size(); ++r) row_names_.emplace(full[r], shown[r]);
    row_names_build_ = builds_;
  }
  float longest = 0;
  for (const auto& [full, shown] : row_names_) {
    longest = std::max(longest, ImGui::CalcTextSize(shown.c_str()).x);
  }
  const float name_width = name_column_width(longest + ImGui::GetStyle().CellPadding.x * 2 + 8,
                                             available, ImGui::GetFontSize());
  const trace::StatsColumn* total = trace::find_stats_column("total_ns", all);
  for (const trace::StatsColumn* c : columns) {
    ImGuiTableColumnFlags cf = ImGuiTableColumnFlags_PreferSortDescending;
    if (c->is_name) cf = ImGuiTableColumnFlags_NoHide | ImGuiTableColumnFlags_WidthFixed;
    if (c == total) cf |= ImGuiTableColumnFlags_DefaultSort;
    const float width = c->is_name ? name_width : 0.0f;
    ImGui::TableSetupColumn(std::string(c->title).c_str(), cf, width,
                            static_cast<ImGuiID>(c - all.data()));
  }
  // The Name column follows the names of each new table (the user may resize it after).
  // On the table's first frame its setup width applies; ImGui can only resize a table
  // it has laid out once (MinColumnWidth is known from then on). As in `flopline
  // stats`' table, a column no row has a value for starts hidden (the header's menu
  // shows it again).
  if (name_width_build_ != builds_ && ImGui::GetCurrentTable()->MinColumnWidth > 0) {
    name_width_build_ = builds_;
    ImGui::TableSetColumnWidth(0, name_width);
    for (int c = 0; c < ncol; ++c) {
      const trace::StatsColumn& col = *columns[static_cast<std::size_t>(c)];
      if (col.is_name) continue;
      bool any = false;
      for (const OpRow& r : t.rows()) any = any || col.value(r.stats).known();
      ImGui::TableSetColumnEnabled(c, any);
    }
  }
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsCount > 0) {
      const std::size_t id = specs->Specs[0].ColumnUserID;
      const trace::StatsColumn* col = id < all.size() ? &all[id] : total;
      const bool desc = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
      if (specs->SpecsDirty || col != t.sort_column() || desc != t.sort_descending()) {
        table_->sort(*col, desc);
        refilter();
      }
    }
    specs->SpecsDirty = false;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(shown_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const OpRow& row = t.rows()[shown_[static_cast<std::size_t>(i)]];
      ImGui::TableNextRow();
      ImGui::PushID(i);
      for (int c = 0; c < ncol; ++c) {
        if (!ImGui::TableSetColumnIndex(c)) continue;
        const trace::StatsColumn& col = *columns[static_cast<std::size_t>(c)];
        std::string text;
        if (const auto it = col.is_name ? row_names_.find(row.stats.name) : row_names_.end();
            it != row_names_.end()) {
          text = it->second;
        } else {
          text = op_cell_text(row, col);
        }
        if (col.is_name) {
          const bool lit = s.selection.highlighted_name == row.stats.name;
          if (ImGui::Selectable(text.c_str(), lit, ImGuiSelectableFlags_SpanAllColumns)) {
            highlight_and_jump(s, t.query(), row.stats.name);
          }
          if (ImGui::IsItemHovered() && (text != row.stats.name || text.size() > 40))
            ImGui::SetTooltip("%s", row.stats.name.c_str());
        } else {
          ImGui::TextUnformatted(text.c_str());
        }
      }
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

void TableWindow::draw_contents(AppState& s) {
  if (grouping_combo("##by", &by_)) auto_switched_ = true;  // the user chose
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  if (ImGui::InputTextWithHint("##filter", "filter names", filter_, sizeof filter_)) refilter();
  ImGui::SameLine();
  if (ImGui::Button("Export CSV...")) export_requested_ = true;
  if (s.selection.range) {
    ImGui::SameLine();
    ImGui::Text("range %s .. %s", format_duration(s.selection.range->begin_ns - s.begin_ns).c_str(),
                format_duration(s.selection.range->end_ns - s.begin_ns).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("whole trace")) s.selection.range.reset();
  }
  if (building_) {
    ImGui::SameLine();
    ImGui::TextDisabled("building...");
  }
  if (!table_) return;
  if (built_ && built_->by != by_) return;  // the new grouping is being built
  ImGui::TextDisabled("%zu of %zu rows, %llu slices, %s in total%s", shown_.size(),
                      table_->rows().size(), static_cast<unsigned long long>(table_->slices()),
                      format_duration(table_->total_ns()).c_str(),
                      table_->all_categories ? "" : "; categories:");
  if (!table_->all_categories) {
    for (const std::string& c : table_->categories_used) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", c.c_str());
    }
  }
  if (counted_ && counted_generation_ == s.generation && counted_->any_counted()) {
    ImGui::TextDisabled("counters: %s", trace::counted_coverage_line(*counted_).c_str());
  }
  draw_table(s);
}

void TableWindow::draw(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size) {
  poll(s, s.show_table || s.show_roofline || full);
  if (!s.show_table && !full) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  if (full) {
    ImGui::SetNextWindowPos(full_pos);
    ImGui::SetNextWindowSize(full_size);
    ImGui::SetNextWindowBgAlpha(1.0f);  // nothing behind it shows through
  } else {
    ImGui::SetNextWindowPos({vp->WorkPos.x + 20, vp->WorkPos.y + vp->WorkSize.y * 0.45f},
                            ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize({vp->WorkSize.x - 40, vp->WorkSize.y * 0.5f}, ImGuiCond_FirstUseEver);
  }
  const char* title = s.selection.range ? "FLOP/s table (range)###table" : "FLOP/s table###table";
  const ImGuiWindowFlags flags =
      full ? ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse : 0;
  bool* open = full ? nullptr : &s.show_table;
  if (ImGui::Begin(title, open, flags)) draw_contents(s);
  ImGui::End();
}

}  // namespace flopline::viewer
