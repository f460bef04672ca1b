// Command-line parsing of `flopline` and `flopline stats`: every value parser and
// every error path, plus the exit codes the dispatcher returns for them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_app.h"
#include "cli_parse.h"
#include "cli_test_util.h"
#include "command_table.h"
#include "stats_command.h"

namespace flopline::cli {
namespace {

using Args = std::vector<std::string>;

// ---- split_args -------------------------------------------------------------------

constexpr OptionSpec kSpecs[] = {
    {"--by", true},
    {"--csv", false},
    {"--help", false, "-h"},
};

TEST(SplitArgs, OptionsAndPositionalsInAnyOrder) {
  const Args a = {"x.json", "--by", "op", "y.json", "--csv", "--by=name"};
  auto r = split_args(a, kSpecs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->positional, (Args{"x.json", "y.json"}));
  ASSERT_EQ(r.value->options.size(), 3u);
  EXPECT_EQ(r.value->options[0], (std::pair<std::string, std::string>{"--by", "op"}));
  EXPECT_EQ(r.value->options[1].first, "--csv");
  EXPECT_EQ(r.value->options[2], (std::pair<std::string, std::string>{"--by", "name"}));
  EXPECT_TRUE(r.value->has("--csv"));
  EXPECT_FALSE(r.value->has("--help"));
}

TEST(SplitArgs, DoubleDashEndsOptions) {
  const Args a = {"--csv", "--", "--by", "-h", "-"};
  auto r = split_args(a, kSpecs);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->positional, (Args{"--by", "-h", "-"}));
}

TEST(SplitArgs, AliasMapsToTheLongName) {
  const Args a = {"-h"};
  auto r = split_args(a, kSpecs);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value->has("--help"));
}

TEST(SplitArgs, EmptyValueWithEqualsIsKept) {
  const Args a = {"--by="};
  auto r = split_args(a, kSpecs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value->options[0].second, "");
}

TEST(SplitArgs, Errors) {
  struct Case {
    Args args;
    std::string message_part;
  };
  const Case cases[] = {
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"--bogus=3"}, "unknown option '--bogus'"},
      {{"-x"}, "unknown option '-x'"},
      {{"--by"}, "option '--by' needs a value"},
      {{"--by", "--csv"}, "option '--by' needs a value"},
      {{"--csv=yes"}, "option '--csv' takes no value"},
  };
  for (const Case& c : cases) {
    auto r = split_args(c.args, kSpecs);
    EXPECT_FALSE(r.ok()) << c.args[0];
    EXPECT_NE(r.error.find(c.message_part), std::string::npos) << r.error;
  }
}

// ---- value parsers ----------------------------------------------------------------

TEST(ParsePositiveCount, AcceptsPositiveIntegers) {
  EXPECT_EQ(*parse_positive_count("1", "--top").value, 1u);
  EXPECT_EQ(*parse_positive_count("18446744073709551615", "--top").value, UINT64_MAX);
}

TEST(ParsePositiveCount, Errors) {
  for (const char* bad : {"", "0", "-3", "+3", "3x", "abc", "1.5", " 3", "18446744073709551616"}) {
    auto r = parse_positive_count(bad, "--top");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error.find("--top"), std::string::npos) << r.error;
  }
  EXPECT_NE(parse_positive_count("0", "--top").error.find("at least 1"), std::string::npos);
  EXPECT_NE(parse_positive_count("99999999999999999999", "--top").error.find("too large"),
            std::string::npos);
}

TEST(ParseDuration, UnitsAndBareNanoseconds) {
  EXPECT_EQ(*parse_duration_ns("1500", "--range").value, 1500);
  EXPECT_EQ(*parse_duration_ns("1500ns", "--range").value, 1500);
  EXPECT_EQ(*parse_duration_ns("2.5us", "--range").value, 2500);
  EXPECT_EQ(*parse_duration_ns("10ms", "--range").value, 10'000'000);
  EXPECT_EQ(*parse_duration_ns("1s", "--range").value, 1'000'000'000);
  EXPECT_EQ(*parse_duration_ns("0", "--range").value, 0);
  EXPECT_EQ(*parse_duration_ns(".5us", "--range").value, 500);
  EXPECT_EQ(*parse_duration_ns("3.", "--range").value, 3);
  EXPECT_EQ(*parse_duration_ns("1.000000001s", "--range").value, 1'000'000'001);
  EXPECT_EQ(*parse_duration_ns("9223372036854775807", "--range").value, INT64_MAX);
}

TEST(ParseDuration, FractionsOfANanosecondRoundHalfUp) {
  EXPECT_EQ(*parse_duration_ns("1.4ns", "--range").value, 1);
  EXPECT_EQ(*parse_duration_ns("1.5ns", "--range").value, 2);
  EXPECT_EQ(*parse_duration_ns("0.0015us", "--range").value, 2);
  EXPECT_EQ(*parse_duration_ns("0.00149999us", "--range").value, 1);
  EXPECT_EQ(*parse_duration_ns("2.0000000005s", "--range").value, 2'000'000'001);
}

TEST(ParseDuration, Errors) {
  struct Case {
    const char* text;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "needs a time"},         {"-5ms", "must not be negative"},
      {"5m", "unknown unit 'm'"},   {"5 ms", "unknown unit ' ms'"},
      {"5MS", "unknown unit 'MS'"}, {"1e3", "unknown unit 'e3'"},
      {"abc", "not a time"},        {".", "not a time"},
      {"ms", "not a time"},         {"9223372036854775808", "too large"},
      {"9223372037s", "too large"}, {"99999999999999999999999", "too large"},
  };
  for (const Case& c : cases) {
    auto r = parse_duration_ns(c.text, "--range");
    EXPECT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error.find(c.message_part), std::string::npos) << c.text << ": " << r.error;
  }
}

TEST(ParseRange, BothSidesOrEither) {
  auto both = parse_range("5ms:10ms", "--range");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both.value->begin, 5'000'000);
  EXPECT_EQ(*both.value->end, 10'000'000);
  auto from = parse_range("5ms:", "--range");
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(*from.value->begin, 5'000'000);
  EXPECT_FALSE(from.value->end.has_value());
  auto until = parse_range(":1s", "--range");
  ASSERT_TRUE(until.ok());
  EXPECT_FALSE(until.value->begin.has_value());
  EXPECT_EQ(*until.value->end, 1'000'000'000);
}

TEST(ParseRange, Errors) {
  struct Case {
    const char* text;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "is not a range"},
      {"5ms", "is not a range"},
      {"1:2:3", "is not a range"},
      {":", "names no bound"},
      {"10ms:5ms", "ends before it begins"},
      {"5ms:5ms", "ends before it begins"},
      {"x:1", "not a time"},
      {"1:2q", "unknown unit"},
      {"-1:2", "must not be negative"},
  };
  for (const Case& c : cases) {
    auto r = parse_range(c.text, "--range");
    EXPECT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error.find(c.message_part), std::string::npos) << c.text << ": " << r.error;
    EXPECT_NE(r.error.find("--range"), std::string::npos) << r.error;
  }
}

TEST(ParseList, SplitsAndTrims) {
  EXPECT_EQ(*parse_list("kernel", "--cat").value, (Args{"kernel"}));
  EXPECT_EQ(*parse_list(" kernel , gpu_memcpy", "--cat").value, (Args{"kernel", "gpu_memcpy"}));
}

TEST(ParseList, EmptyItemsAreErrors) {
  for (const char* bad : {"", ",", "a,,b", "a,", ",a", " , "}) {
    auto r = parse_list(bad, "--cat");
    EXPECT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_NE(r.error.find("empty item"), std::string::npos) << r.error;
  }
}

// ---- flopline stats ---------------------------------------------------------------

TEST(StatsArgs, Defaults) {
  auto r = parse_stats_args(Args{"a.json"});
  ASSERT_TRUE(r.ok()) << r.error;
  const StatsOptions& o = *r.value;
  EXPECT_EQ(o.files, (Args{"a.json"}));
  EXPECT_EQ(o.by, trace::GroupBy::kName);
  EXPECT_TRUE(o.categories.empty());
  EXPECT_FALSE(o.top.has_value());
  EXPECT_FALSE(o.range.has_value());
  EXPECT_EQ(o.format, StatsFormat::kTable);
  EXPECT_FALSE(o.help);
}

TEST(StatsArgs, EveryOption) {
  auto r = parse_stats_args(Args{"a.json", "--by", "op", "--cat", "kernel,cpu_op", "--cat=kernel,x",
                                 "--top", "5", "--range", "1ms:2ms", "--json", "b.json.gz"});
  ASSERT_TRUE(r.ok()) << r.error;
  const StatsOptions& o = *r.value;
  EXPECT_EQ(o.files, (Args{"a.json", "b.json.gz"}));
  EXPECT_EQ(o.by, trace::GroupBy::kOperator);
  EXPECT_EQ(o.categories, (Args{"kernel", "cpu_op", "x"}));  // repeated, deduplicated
  EXPECT_EQ(*o.top, 5u);
  EXPECT_EQ(*o.range->begin, 1'000'000);
  EXPECT_EQ(*o.range->end, 2'000'000);
  EXPECT_EQ(o.format, StatsFormat::kJson);
}

TEST(StatsArgs, GroupingNames) {
  EXPECT_EQ(parse_stats_args(Args{"t", "--by", "name"}).value->by, trace::GroupBy::kName);
  EXPECT_EQ(parse_stats_args(Args{"t", "--by", "op"}).value->by, trace::GroupBy::kOperator);
  EXPECT_EQ(parse_stats_args(Args{"t", "--by", "operator"}).value->by, trace::GroupBy::kOperator);
  EXPECT_EQ(parse_stats_args(Args{"t", "--by", "category"}).value->by, trace::GroupBy::kCategory);
  EXPECT_EQ(parse_stats_args(Args{"t", "--csv"}).value->format, StatsFormat::kCsv);
}

TEST(StatsArgs, NameWidth) {
  EXPECT_EQ(parse_stats_args(Args{"t"}).value->name_width, 100u);
  EXPECT_EQ(parse_stats_args(Args{"t", "--name-width", "40"}).value->name_width, 40u);
  EXPECT_EQ(parse_stats_args(Args{"t", "--full-names"}).value->name_width, 0u);
  const auto small = parse_stats_args(Args{"t", "--name-width", "3"});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error.find("--name-width must be at least 8"), std::string::npos);
  EXPECT_FALSE(parse_stats_args(Args{"t", "--name-width", "wide"}).ok());
}

TEST(StatsArgs, HelpWinsOverErrors) {
  for (const Args& a : {Args{"--help"}, Args{"-h"}, Args{"--bogus", "--help"}, Args{"x", "-h"}}) {
    auto r = parse_stats_args(a);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.value->help);
  }
  // After "--" it is a file name.
  auto r = parse_stats_args(Args{"--", "--help"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value->help);
  EXPECT_EQ(r.value->files, (Args{"--help"}));
}

TEST(StatsArgs, Errors) {
  struct Case {
    Args args;
    const char* message_part;
  };
  const Case cases[] = {
      {{}, "no trace file given"},
      {{"--csv"}, "no trace file given"},
      {{"t", "--csv", "--json"}, "cannot be combined"},
      {{"t", "--by", "kernel"}, "--by 'kernel' is not a grouping"},
      {{"t", "--by"}, "'--by' needs a value"},
      {{"t", "--by", "--csv"}, "'--by' needs a value"},
      {{"t", "--cat", ""}, "empty item"},
      {{"t", "--cat", "a,,b"}, "empty item"},
      {{"t", "--top", "0"}, "at least 1"},
      {{"t", "--top", "ten"}, "not a positive integer"},
      {{"t", "--top", "-3"}, "not a positive integer"},
      {{"t", "--top"}, "'--top' needs a value"},
      {{"t", "--range", "5ms"}, "not a range"},
      {{"t", "--range", "2ms:1ms"}, "ends before it begins"},
      {{"t", "--range", "1x:"}, "unknown unit"},
      {{"t", "--range"}, "'--range' needs a value"},
      {{"t", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{"t", "--csv=1"}, "takes no value"},
  };
  for (const Case& c : cases) {
    auto r = parse_stats_args(c.args);
    EXPECT_FALSE(r.ok()) << c.message_part;
    EXPECT_NE(r.error.find(c.message_part), std::string::npos) << r.error;
  }
}

TEST(StatsArgs, UsageMentionsEveryOption) {
  const std::string u = stats_usage();
  for (const char* opt : {"--by", "--cat", "--top", "--range", "--csv", "--json", "--help"}) {
    EXPECT_NE(u.find(opt), std::string::npos) << opt;
  }
}

// ---- the dispatcher ---------------------------------------------------------------

using testing::CliRun;
using testing::run_flopline;

TEST(Cli, HelpAndVersion) {
  for (const char* h : {"--help", "-h", "help"}) {
    const CliRun r = run_flopline({h});
    EXPECT_EQ(r.rc, kExitOk);
    EXPECT_NE(r.out.find("usage: flopline"), std::string::npos);
    EXPECT_NE(r.out.find("stats"), std::string::npos);
    EXPECT_TRUE(r.err.empty());
  }
  const CliRun v = run_flopline({"--version"});
  EXPECT_EQ(v.rc, kExitOk);
  EXPECT_EQ(v.out.rfind("flopline ", 0), 0u);
  const CliRun hs = run_flopline({"help", "stats"});
  EXPECT_EQ(hs.rc, kExitOk);
  EXPECT_NE(hs.out.find("usage: flopline stats"), std::string::npos);
  const CliRun sh = run_flopline({"stats", "--help"});
  EXPECT_EQ(sh.rc, kExitOk);
  EXPECT_EQ(sh.out, hs.out);
}

TEST(Cli, HelpListsExactlyTheCommandsThatExist) {
  const std::string u = main_usage();
  for (const Command& c : command_table()) {
    EXPECT_NE(u.find("  " + std::string(c.name) + " "), std::string::npos) << c.name;
  }
  for (const char* absent : {"merge", "view", "calibrate"}) {
    if (find_command(absent) == nullptr) {
      EXPECT_EQ(u.find(std::string("  ") + absent + " "), std::string::npos) << absent;
    }
  }
}

TEST(Cli, UsageErrorsExitWith2AndNameTheProblem) {
  struct Case {
    Args args;
    const char* message_part;
  };
  const Case cases[] = {
      {{}, "no command given"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"help", "frobnicate"}, "unknown command 'frobnicate'"},
      {{"stats"}, "no trace file given"},
      {{"stats", "t.json", "--top", "x"}, "not a positive integer"},
      {{"stats", "t.json", "--unknown"}, "unknown option '--unknown'"},
  };
  for (const Case& c : cases) {
    const CliRun r = run_flopline(c.args);
    EXPECT_EQ(r.rc, kExitUsage) << c.message_part;
    EXPECT_NE(r.err.find(c.message_part), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  const CliRun r = run_flopline({"stats", "t.json", "--unknown"});
  EXPECT_NE(r.err.find("Run 'flopline stats --help' for usage."), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("flopline stats: ", 0), 0u) << r.err;
}

TEST(Cli, MissingFileExitsWith1AndNamesIt) {
  const CliRun r = run_flopline({"stats", "/nonexistent/dir/trace.json"});
  EXPECT_EQ(r.rc, kExitFailure);
  EXPECT_NE(r.err.find("/nonexistent/dir/trace.json"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace flopline::cli
