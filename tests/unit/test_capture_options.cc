// The capture options are one table (capture_config.h, capture_options()): `flopline
// run`'s option, the variable the injection library reads and SessionOptions' member of
// each. These tests fail when the command line, the child's environment, the library's
// reading of it, SessionOptions or docs/CAPTURE.md disagree with the table.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "run_command.h"

namespace flopline::capture {
namespace {

using Args = std::vector<std::string>;

const std::string kRoot = std::string(FLOPLINE_TEST_DATA_DIR) + "/../..";

std::string read_file(const std::string& path) {
  std::ifstream f(kRoot + "/" + path);
  EXPECT_TRUE(f) << path;
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The text under `heading` (a whole line) up to the next heading of its level or above.
std::string section(const std::string& doc, const std::string& heading) {
  const std::string line = "\n" + heading + "\n";
  const auto at = doc.find(line);
  EXPECT_NE(at, std::string::npos) << heading;
  if (at == std::string::npos) return {};
  const std::size_t body = at + line.size();
  std::size_t end = body;
  while ((end = doc.find("\n#", end)) != std::string::npos) {
    const std::size_t hashes = doc.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= heading.find(' ')) break;
    ++end;
  }
  return doc.substr(body, end == std::string::npos ? std::string::npos : end - body);
}

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

// A markdown table's body rows as cells.
std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.starts_with("| ") || l.starts_with("| ---")) continue;
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

GetEnv env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* name) -> const char* {
    const auto it = m.find(name);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

// The variables a `flopline run` with `args` gives its command.
std::map<std::string, std::string> child_env_of(const Args& args) {
  std::map<std::string, std::string> m;
  auto r = cli::parse_run_args(args);
  EXPECT_TRUE(r.ok()) << r.error;
  if (!r.ok()) return m;
  cli::RunEnvironment run = cli::capture_environment(*r.value);
  run.inject_library = "/lib/libflopline_inject.so";
  for (const std::string& e : cli::build_run_environment({}, run)) {
    const auto eq = e.find('=');
    m[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return m;
}

// What a capture option needs beside it to be taken (the capture-window rules).
Args companions(CaptureOptionId id) {
  if (id == CaptureOptionId::kNvtxCapture) return {"--capture-range=nvtx"};
  if (id == CaptureOptionId::kCaptureRangeEnd) return {"--capture-range=cudaProfilerApi"};
  return {};
}

TEST(CaptureOptions, OneEntryEachInTheIdsOrder) {
  std::set<std::string_view> envs, clis, sessions;
  std::size_t i = 0;
  for (const CaptureOption& o : capture_options()) {
    EXPECT_EQ(static_cast<std::size_t>(o.id), i++) << o.env;
    EXPECT_EQ(&capture_option(o.id), &o) << o.env;
    EXPECT_TRUE(o.env.starts_with("FLOPLINE_")) << o.env;
    EXPECT_TRUE(envs.insert(o.env).second) << o.env;
    EXPECT_FALSE(o.example.empty()) << o.env;
    if (!o.cli.empty()) {
      EXPECT_TRUE(o.cli.starts_with("--")) << o.cli;
      EXPECT_TRUE(clis.insert(o.cli).second) << o.cli;
      EXPECT_FALSE(o.by_run) << o.env << ": an option of its own is not set by the run";
    }
    if (!o.session.empty()) {
      EXPECT_TRUE(sessions.insert(o.session).second) << o.session;
    }
  }
  EXPECT_EQ(i, kCaptureOptionCount);
}

// Each option of `flopline run`, in each of its forms, reaches the command under its
// variable, and the injection library takes what it finds there.
TEST(CaptureOptions, EachOptionReachesTheLibraryUnderItsVariable) {
  const std::string usage = cli::run_usage();
  for (const CaptureOption& o : capture_options()) {
    if (o.cli.empty()) continue;
    // " --kinds LIST", " --counters[=N|all]", " --capture-range=KIND".
    bool in_usage = false;
    for (const char* after : {" ", "[", "="})
      in_usage = in_usage || usage.find(" " + std::string(o.cli) + after) != std::string::npos;
    EXPECT_TRUE(in_usage) << o.cli << ": not in flopline run --help";
    std::vector<std::pair<Args, std::string>> forms = {
        {{std::string(o.cli) + "=" + std::string(o.example)}, std::string(o.example)},
        {{std::string(o.cli), std::string(o.example)}, std::string(o.example)}};
    if (!o.cli_short.empty())
      forms.push_back({{std::string(o.cli_short), std::string(o.example)}, std::string(o.example)});
    // An option that takes its value after '=' only has a bare form instead.
    if (!o.bare.empty()) forms[1] = {{std::string(o.cli)}, std::string(o.bare)};
    for (auto& [form, value] : forms) {
      Args args = companions(o.id);
      args.insert(args.end(), form.begin(), form.end());
      args.insert(args.end(), {"--", "prog"});
      const std::map<std::string, std::string> env = child_env_of(args);
      const auto it = env.find(std::string(o.env));
      ASSERT_NE(it, env.end()) << form[0] << " does not set " << o.env;
      EXPECT_EQ(it->second, value) << form[0];
      const CaptureEnv read = read_capture_env(env_of(env));
      EXPECT_TRUE(read.warnings.empty()) << o.env << ": " << read.warnings.front();
    }
  }
}

// The run's own variables, under the table's names, and read back by the library.
TEST(CaptureOptions, TheRunsOwnVariablesAreTheTables) {
  cli::RunEnvironment run;
  run.inject_library = "/lib/libflopline_inject.so";
  for (const CaptureOption& o : capture_options()) {
    if (o.by_run) run.values[o.id] = std::string(o.example);
  }
  std::map<std::string, std::string> env;
  for (const std::string& e : cli::build_run_environment({}, run)) {
    const auto eq = e.find('=');
    env[e.substr(0, eq)] = e.substr(eq + 1);
  }
  for (const CaptureOption& o : capture_options()) {
    if (!o.by_run) continue;
    ASSERT_TRUE(env.count(std::string(o.env))) << o.env << " is not set by flopline run";
    EXPECT_EQ(env[std::string(o.env)], o.example) << o.env;
  }
  env["FLOPLINE_QUIET"] = capture_option(CaptureOptionId::kQuiet).example;
  env["FLOPLINE_SELF_TIMING"] = capture_option(CaptureOptionId::kSelfTiming).example;
  const CaptureEnv read = read_capture_env(env_of(env));
  EXPECT_TRUE(read.warnings.empty()) << read.warnings.front();
  EXPECT_EQ(read.manifest, capture_option(CaptureOptionId::kManifest).example);
  EXPECT_EQ(read.run_id, capture_option(CaptureOptionId::kRunId).example);
  EXPECT_EQ(std::to_string(read.run_pid), capture_option(CaptureOptionId::kRunPid).example);
  EXPECT_EQ(read.control_dir, capture_option(CaptureOptionId::kControlDir).example);
  EXPECT_EQ(std::to_string(run_time_base(env_of(env)).value_or(0)),
            capture_option(CaptureOptionId::kTimeBase).example);
  EXPECT_TRUE(read.quiet);
  EXPECT_TRUE(read.self_timing);
}

// One parser and one set of rules: each front end gets the same problems, named its way,
// and the command line refuses, the library warns with the fallback, what the parser says.
TEST(CaptureOptions, OneParserAndOneRuleForEveryFrontEnd) {
  CaptureOptionValues both;
  both[CaptureOptionId::kCounters] = "on";
  both[CaptureOptionId::kGpuMetrics] = "on";
  CaptureOptionValues bad_kinds;
  bad_kinds[CaptureOptionId::kKinds] = "kernel,bogus";
  for (CaptureFrontEnd front :
       {CaptureFrontEnd::kCommandLine, CaptureFrontEnd::kEnvironment, CaptureFrontEnd::kSession}) {
    std::vector<CaptureProblem> problems;
    const CaptureEnv c = parse_capture_options(both, front, &problems);
    EXPECT_TRUE(c.counters.on);
    EXPECT_FALSE(c.gpu_metrics.on);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].message,
              std::string(capture_option_name(CaptureOptionId::kCounters, front)) + " and " +
                  std::string(capture_option_name(CaptureOptionId::kGpuMetrics, front)) +
                  " cannot be used together (both read the GPU's performance monitors)");
    problems.clear();
    EXPECT_EQ(parse_capture_options(bad_kinds, front, &problems).kinds, kDefaultKinds);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(
        problems[0].message.rfind(std::string(capture_option_name(CaptureOptionId::kKinds, front)) +
                                      ": unknown activity kind 'bogus'",
                                  0),
        0u)
        << problems[0].message;
  }
  std::vector<CaptureProblem> cli;
  parse_capture_options(both, CaptureFrontEnd::kCommandLine, &cli);
  const auto run = cli::parse_run_args(Args{"--counters", "--gpu-metrics", "--", "prog"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error, cli[0].message);
  std::vector<CaptureProblem> env;
  parse_capture_options(both, CaptureFrontEnd::kEnvironment, &env);
  const CaptureEnv read =
      read_capture_env(env_of({{"FLOPLINE_COUNTERS", "on"}, {"FLOPLINE_GPU_METRICS", "on"}}));
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_EQ(read.warnings[0], env[0].message + "; GPU metrics are off");
}

// SessionOptions' members are the table's session names, no more, no fewer.
TEST(CaptureOptions, SessionOptionsAreTheTables) {
  const std::string header = read_file("profiler/include/flopline/session.h");
  const auto open = header.find("struct SessionOptions {");
  ASSERT_NE(open, std::string::npos);
  const std::string body = header.substr(open, header.find("\n};", open) - open);
  std::set<std::string> members;
  const std::regex member(R"(\n  std::\w+ (\w+)( = [^;]*)?;)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), member);
       it != std::sregex_iterator(); ++it)
    members.insert((*it)[1]);
  EXPECT_FALSE(members.empty());
  std::set<std::string> sessions;
  for (const CaptureOption& o : capture_options()) {
    if (!o.session.empty()) sessions.insert(std::string(o.session));
  }
  EXPECT_EQ(members, sessions) << "SessionOptions' members against the capture options table";
}

TEST(CaptureOptionsDocs, CaptureMdNamesEveryOptionAndVariable) {
  const std::string doc = read_file("docs/CAPTURE.md");
  const std::string run = section(doc, "## `flopline run`");
  const std::string synopsis = run.substr(0, run.find("```", run.find("```") + 3));
  // The options' list: "- `--kinds LIST`: ..." (several per line allowed).
  std::set<std::string> listed;
  std::istringstream lines(run);
  for (std::string l; std::getline(lines, l);) {
    if (!l.starts_with("- `")) continue;
    for (const std::string& w : backticked(l.substr(0, l.find(':')))) {
      listed.insert(w.substr(0, w.find_first_of(" [=")));
    }
  }
  // "What flopline run does": the variables the run sets, each from its option.
  std::map<std::string, std::string> from;  // variable -> option ("" = the run's own)
  for (const auto& cells : table_rows(section(run, "### What `flopline run` does"))) {
    const std::vector<std::string> vars = backticked(cells[0]);
    const std::vector<std::string> opts =
        cells[1].starts_with("from ") ? backticked(cells[1]) : std::vector<std::string>{};
    for (std::size_t i = 0; i < vars.size(); ++i) {
      if (!vars[i].starts_with("FLOPLINE_")) continue;
      from[vars[i]] = opts.empty() ? "" : i < opts.size() ? opts[i] : "?";
    }
  }
  std::set<std::string> documented;
  for (const auto& cells : table_rows(section(doc, "## Environment variables"))) {
    for (const std::string& v : backticked(cells[0])) documented.insert(v);
  }
  for (const CaptureOption& o : capture_options()) {
    const std::string env(o.env);
    EXPECT_TRUE(documented.count(env)) << env << ": no row in docs/CAPTURE.md's variables";
    if (!o.cli.empty()) {
      const std::string shown = o.cli_short.empty() ? std::string(o.cli) : std::string(o.cli_short);
      EXPECT_NE(synopsis.find("[" + shown), std::string::npos)
          << shown << ": not in docs/CAPTURE.md's synopsis of flopline run";
      EXPECT_TRUE(listed.count(std::string(o.cli)))
          << o.cli << ": not in docs/CAPTURE.md's list of flopline run's options";
      if (!o.cli_short.empty()) {
        EXPECT_TRUE(listed.count(std::string(o.cli_short))) << o.cli_short;
      }
      EXPECT_EQ(from.count(env) ? from[env] : "(none)", shown)
          << env << ": docs/CAPTURE.md's 'What flopline run does' says where it comes from";
    } else if (o.by_run) {
      EXPECT_EQ(from.count(env) ? from[env] : "(none)", "")
          << env << ": docs/CAPTURE.md's 'What flopline run does' lists what the run sets";
    }
  }
  // And nothing there that the table does not have.
  for (const auto& [env, opt] : from) {
    bool known = false;
    for (const CaptureOption& o : capture_options()) known = known || o.env == env;
    EXPECT_TRUE(known) << env << ": in 'What flopline run does', not a capture option";
  }
}

}  // namespace
}  // namespace flopline::capture
