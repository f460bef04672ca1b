// The reference pages list what the schemas define: docs/STATS.md's groupings, column
// table, CSV header and JSON fields are those of flopline/trace/stats_schema.h and
// cli/stats_machine.cc; docs/DIFF.md's table header, CSV header and JSON row are those
// of flopline/trace/diff_schema.h. A column, grouping or field missing from either side
// fails here, naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/diff_schema.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/stats_csv.h"
#include "flopline/trace/stats_schema.h"
#include "stats_output.h"

namespace flopline::trace {
namespace {

const std::string kRoot = std::string(FLOPLINE_TEST_DATA_DIR) + "/../..";

std::string read_doc(const std::string& name) {
  std::ifstream f(kRoot + "/docs/" + name);
  EXPECT_TRUE(f) << "docs/" << name;
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The text under `heading` (a whole line, "## Columns") up to the next heading of the
// same or a higher level.
std::string section(const std::string& doc, std::string_view heading) {
  const std::string line = "\n" + std::string(heading) + "\n";
  const auto at = doc.find(line);
  EXPECT_NE(at, std::string::npos) << heading;
  if (at == std::string::npos) return {};
  const std::size_t level = heading.find(' ');
  std::size_t end = at + line.size();
  while (true) {
    end = doc.find("\n#", end);
    if (end == std::string::npos) break;
    const std::size_t hashes = doc.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level) break;
    ++end;
  }
  return doc.substr(at + line.size(),
                    end == std::string::npos ? std::string::npos : end - at - line.size());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A markdown table's body rows (not its header or rule), each as its cells.
std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  bool header = true;
  for (const std::string& l : lines_of(text)) {
    if (!l.starts_with("| ")) {
      header = true;  // the next table starts with its header
      continue;
    }
    if (l.starts_with("| ---")) {
      header = false;
      continue;
    }
    if (header) continue;
    std::vector<std::string> cells;
    std::string_view rest(l);
    rest.remove_prefix(2);
    if (rest.ends_with(" |")) rest.remove_suffix(2);
    while (true) {
      const auto bar = rest.find(" | ");
      cells.emplace_back(rest.substr(0, bar));
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 3);
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

// The `quoted` words of a piece of text, in order.
std::vector<std::string> backticked(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const auto a = text.find('`');
    if (a == std::string_view::npos) break;
    const auto b = text.find('`', a + 1);
    if (b == std::string_view::npos) break;
    out.emplace_back(text.substr(a + 1, b - a - 1));
    text.remove_prefix(b + 1);
  }
  return out;
}

// The "quoted" words of a piece of text, in order.
std::vector<std::string> quoted_words(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const auto a = text.find('"');
    if (a == std::string_view::npos) break;
    const auto b = text.find('"', a + 1);
    if (b == std::string_view::npos) break;
    out.emplace_back(text.substr(a + 1, b - a - 1));
    text.remove_prefix(b + 1);
  }
  return out;
}

std::vector<std::string> split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  while (true) {
    const auto at = s.find(sep);
    out.emplace_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + sep.size());
  }
  return out;
}

// The first fenced block after `marker` in `text`, without its fences.
std::string block_after(const std::string& text, std::string_view marker) {
  const auto at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  if (at == std::string::npos) return {};
  const auto open = text.find("```", at);
  const auto body = text.find('\n', open) + 1;
  const auto close = text.find("\n```", body);
  return text.substr(body, close - body);
}

TEST(StatsDocs, EveryGroupingHasItsRows) {
  const std::string doc = read_doc("STATS.md");
  // The options table: a `--by NAME` row per grouping, naming its aliases.
  std::map<std::string, std::string> by_rows;
  for (const auto& cells : table_rows(section(doc, "## Options"))) {
    if (cells.size() >= 2 && cells[0].starts_with("`--by ")) {
      by_rows[cells[0].substr(6, cells[0].size() - 7)] = cells[1];
    }
  }
  std::set<std::string> names;
  for (const StatsGrouping& g : stats_groupings()) {
    const std::string name(g.name);
    names.insert(name);
    ASSERT_TRUE(by_rows.count(name)) << "--by " << name << ": no row in docs/STATS.md's options";
    for (std::string_view alias : g.aliases) {
      EXPECT_NE(by_rows[name].find("`" + std::string(alias) + "`"), std::string::npos)
          << "--by " << name << ": its row does not name the alias " << alias;
    }
  }
  for (const auto& [name, meaning] : by_rows)
    EXPECT_TRUE(names.count(name)) << "docs/STATS.md documents --by " << name << ", no grouping";
  // The default categories table: each grouping once.
  std::multiset<std::string> defaults;
  for (const auto& cells : table_rows(section(doc, "### Default categories"))) {
    for (const std::string& name : backticked(cells[0])) defaults.insert(name);
  }
  for (const std::string& name : names) {
    EXPECT_EQ(defaults.count(name), 1u) << name << ": not once in the default categories table";
  }
  for (const std::string& name : defaults)
    EXPECT_TRUE(names.count(name)) << name << ": default categories of no grouping";
}

TEST(StatsDocs, TheColumnsTableIsTheSchemas) {
  const std::string doc = read_doc("STATS.md");
  std::map<std::string, int> rows_naming;  // column id -> rows of the table naming it
  for (const auto& cells : table_rows(section(doc, "## Columns"))) {
    ASSERT_EQ(cells.size(), 3u) << cells[0];
    const std::vector<std::string> ids = backticked(cells[1]);
    ASSERT_FALSE(ids.empty()) << cells[0] << ": a row without a CSV/JSON id";
    for (const std::string& id : ids) {
      ++rows_naming[id];
      const StatsColumn* c = find_stats_column(id);
      ASSERT_NE(c, nullptr) << "docs/STATS.md documents a column `" << id
                            << "`, the schema has none";
    }
    if (cells[0] == "—") {
      // Not in the people's table: CSV and JSON only.
      for (const std::string& id : ids) {
        EXPECT_EQ(find_stats_column(id)->outputs & kStatsTable, 0)
            << id << ": in the table, but docs/STATS.md says it is not";
      }
      continue;
    }
    // "Min (ns), Max (ns)" | `min_ns`, `max_ns`: the titles in the ids' order.
    const std::vector<std::string> titles = split(cells[0], ", ");
    ASSERT_EQ(titles.size(), ids.size()) << cells[0];
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const StatsColumn& c = *find_stats_column(ids[i]);
      EXPECT_NE(c.outputs & kStatsTable, 0) << ids[i] << ": docs/STATS.md shows it in the table";
      EXPECT_EQ(titles[i], c.table_title) << ids[i] << ": its title in docs/STATS.md";
    }
  }
  for (const StatsColumn& c : stats_columns()) {
    EXPECT_EQ(rows_naming[std::string(c.id)], 1)
        << c.id << ": not in exactly one row of docs/STATS.md's Columns table";
  }
}

TEST(StatsDocs, TheCsvHeaderAndJsonFieldsAreTheWriters) {
  const std::string doc = read_doc("STATS.md");
  EXPECT_EQ(block_after(section(doc, "## CSV schema"), "The header is exactly"),
            stats_csv_header());

  const std::string json = section(doc, "## JSON schema");
  const std::string example = block_after(json, "One object");
  // The example's top-level keys, in the writer's order, and its row's keys: the CSV's
  // columns.
  std::vector<std::string> top;
  for (const auto& [k, v] : json_members(example)) top.push_back(k);
  const std::string_view rows = json_member(example, "rows").value_or("");
  std::vector<std::string> row_keys;
  if (const auto open = rows.find('{'); open != std::string_view::npos) {
    for (const auto& [k, v] : json_members(rows.substr(open))) row_keys.push_back(k);
  }
  EXPECT_EQ(row_keys.empty() ? std::string() : row_keys.front(), "name");
  std::string joined;
  for (const std::string& k : row_keys) joined += (joined.empty() ? "" : ",") + k;
  EXPECT_EQ(joined, stats_csv_header()) << "the JSON example's row in docs/STATS.md";

  // Every field the writer has: in the example or in a bullet below it ("- `key`..."),
  // and every key documented so is the writer's.
  std::set<std::string> documented(top.begin(), top.end());
  for (const std::string& l : lines_of(json)) {
    if (!l.starts_with("- `")) continue;
    for (const std::string& k : backticked(l.substr(0, l.find(':')))) documented.insert(k);
  }
  const std::vector<std::string_view> fields = cli::stats_json_fields();
  const std::set<std::string> written(fields.begin(), fields.end());
  for (std::string_view f : fields) {
    EXPECT_TRUE(documented.count(std::string(f)))
        << f << ": written by flopline stats --json, not in docs/STATS.md's JSON schema";
  }
  for (const std::string& k : documented) {
    EXPECT_TRUE(written.count(k)) << k << ": in docs/STATS.md's JSON schema, not written";
  }
  // The example's keys come in the writer's order.
  std::size_t next = 0;
  for (const std::string& k : top) {
    while (next < fields.size() && fields[next] != k) ++next;
    EXPECT_LT(next, fields.size()) << k << ": out of the writer's order in the JSON example";
  }
}

TEST(DiffDocs, TheTableCsvAndJsonAreTheSchemas) {
  const std::string doc = read_doc("DIFF.md");
  const std::string csv = section(doc, "## CSV and JSON");
  EXPECT_EQ(block_after(csv, "CSV header"), diff_csv_header());

  // The example table's header: the people's columns, in their order.
  std::vector<std::string> titles;
  for (const std::string& l : lines_of(doc)) {
    if (!l.starts_with(" Change ")) continue;
    std::string_view rest(l);
    while (!rest.empty()) {
      const auto start = rest.find_first_not_of(' ');
      if (start == std::string_view::npos) break;
      rest.remove_prefix(start);
      const auto gap = rest.find("  ");
      titles.emplace_back(rest.substr(0, gap));
      if (gap == std::string_view::npos) break;
      rest.remove_prefix(gap);
    }
    break;
  }
  std::vector<std::string> want;
  for (const DiffColumn* c : diff_people_columns()) want.push_back(c->table_title);
  EXPECT_EQ(titles, want) << "the example table's header in docs/DIFF.md";

  // JSON: {"rows": [{the row's fields, "a": {each side's fields} ...
  const auto rows = csv.find("\"rows\": [{");
  ASSERT_NE(rows, std::string::npos);
  const auto side = csv.find("\"a\": {", rows);
  ASSERT_NE(side, std::string::npos);
  const std::vector<std::string> row_words = quoted_words(csv.substr(rows + 10, side - rows - 10));
  const std::vector<std::string> side_words =
      quoted_words(csv.substr(side + 6, csv.find('}', side) - side - 6));
  std::vector<std::string> row_fields, side_fields;
  for (const DiffField& f : diff_fields())
    (f.per_side ? side_fields : row_fields).emplace_back(f.id);
  EXPECT_EQ(row_words, row_fields) << "a row's fields in docs/DIFF.md's JSON";
  EXPECT_EQ(side_words, side_fields) << "a side's fields in docs/DIFF.md's JSON";
}

}  // namespace
}  // namespace flopline::trace
