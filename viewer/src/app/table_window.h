// The FLOP/s table window: per operator, kernel name, category, stream or GPU, every column of
// `flopline stats` (core/op_table.h), sortable by any column, a text filter, a click
// on a row lights its instances on the timeline and jumps to the longest, and CSV
// export. With a ruler range, the table aggregates that range. Tables are built on a
// worker thread: the UI stays responsive on ten million events.
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <imgui.h>

#include "app_state.h"
#include "core/op_table.h"

namespace flopline::viewer {

// The grouping picker shared by the table and the roofline (which plots the table's
// rows): every grouping of stats_schema.h, by its label. True when the user changed it.
bool grouping_combo(const char* id, trace::GroupBy* by);

class TableWindow {
 public:
  ~TableWindow();
  // Draws the window when s.show_table. Builds (in the background) when the traces,
  // the grouping or the range changed. `full`: fill the area given (headless
  // --window table) instead of a floating window.
  void draw(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size);
  // Builds the table now on this thread (headless modes).
  void build_now(AppState& s);
  // Waits for a build in flight: call before the traces it reads go away.
  void wait_idle();
  // Takes a finished build, and starts one when `needed` and the traces, grouping or
  // range changed (tables are built when first shown, not for every load).
  void poll(AppState& s, bool needed);
  bool building() const { return job_.valid(); }
  // The table shown, nullptr before the first build finished.
  const OpTable* table() const { return table_ ? &*table_ : nullptr; }
  // Increases with every table built (so views derived from it know to rebuild).
  std::uint64_t version() const { return version_; }
  // CSV of the rows shown (filter and sort applied).
  std::string csv() const;
  // Asks to save the CSV: the app shows the save dialog and calls back with the path.
  bool take_export_request() {
    const bool r = export_requested_;
    export_requested_ = false;
    return r;
  }

 private:
  struct Key {
    std::uint64_t generation = 0;
    trace::GroupBy by = trace::GroupBy::kOperator;
    std::optional<TimeRange> range;
    friend bool operator==(const Key&, const Key&) = default;
  };
  Key wanted_key(const AppState& s) const;
  // Takes s.table_by_request (the roofline's picker, --by) as the grouping.
  void take_grouping_request(AppState& s);
  void start_build(const AppState& s, const Key& key);
  void refilter();
  void keep_counted();  // takes the coverage a build was asked for
  void draw_contents(AppState& s);
  void draw_table(AppState& s);

  trace::GroupBy by_ = trace::GroupBy::kOperator;
  bool auto_switched_ = false;  // went to kernels once because there were no operators
  std::optional<OpTable> table_;
  // Kernel time by counted basis of the traces of `counted_generation_`: asked of a
  // table build once per set of traces, not at every range or grouping.
  std::optional<trace::CountedCoverage> counted_;
  std::uint64_t counted_generation_ = UINT64_MAX;
  std::optional<Key> built_;
  std::optional<Key> building_;
  std::future<OpTable> job_;
  char filter_[128] = {};
  std::vector<std::size_t> shown_;  // table rows passing the filter, in order
  bool export_requested_ = false;
  std::uint64_t version_ = 0;
  std::uint64_t builds_ = 0;                            // tables built so far
  std::uint64_t name_width_build_ = ~std::uint64_t{0};  // the build the Name width was set for
  // The name shown for each row's full name (rows are sorted in place; names are unique).
  std::unordered_map<std::string, std::string> row_names_;
  std::uint64_t row_names_build_ = ~std::uint64_t{0};  // the build row_names_ are of
};

}  // namespace flopline::viewer
