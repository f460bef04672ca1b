// Lazy access to stored JSON text (args, raw metadata).
#include <gtest/gtest.h>

#include <string>

#include "flopline/trace/json_value.h"

namespace flopline::trace {
namespace {

TEST(JsonValue, Members) {
  const std::string_view obj = R"( { "a" : 1, "b":{"c":[1,2,{"d":"}"}]}, "e\"q":"x", "f":NaN, } )";
  EXPECT_EQ(json_member(obj, "a"), "1");
  EXPECT_EQ(json_member(obj, "b"), R"({"c":[1,2,{"d":"}"}]})");
  EXPECT_EQ(json_member(obj, "e\"q"), R"("x")");  // keys are compared decoded
  EXPECT_EQ(json_member(obj, "f"), "NaN");
  EXPECT_FALSE(json_member(obj, "c"));
  EXPECT_FALSE(json_member("[1]", "a"));
  EXPECT_FALSE(json_member("", "a"));
  EXPECT_FALSE(json_member(R"({"a":)", "a"));  // broken text: nothing, no crash
  const auto all = json_members(obj);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2].first, "e\"q");
  EXPECT_EQ(all[3].second, "NaN");
}

TEST(JsonValue, Numbers) {
  EXPECT_EQ(json_number("2.5"), 2.5);
  EXPECT_EQ(json_number(" -1e3 "), -1000.0);
  EXPECT_EQ(json_number(R"("42.5")"), 42.5);
  EXPECT_EQ(json_number("true"), 1.0);
  EXPECT_EQ(json_number("false"), 0.0);
  EXPECT_TRUE(json_number("NaN").has_value());
  EXPECT_FALSE(json_number("null"));
  EXPECT_FALSE(json_number(R"("x")"));
  EXPECT_FALSE(json_number("[1]"));
  EXPECT_FALSE(json_number("1 2"));
  EXPECT_EQ(json_number("18446744064077150000"), 18446744064077150000.0);
}

TEST(JsonValue, Integers) {
  EXPECT_EQ(json_int("25738"), 25738);
  EXPECT_EQ(json_int(R"("-1")"), -1);
  EXPECT_EQ(json_int("1e3"), 1000);
  EXPECT_EQ(json_int("42.0"), 42);
  EXPECT_FALSE(json_int("1.5"));
  EXPECT_FALSE(json_int("18446744064077150000"));  // above INT64_MAX
  EXPECT_EQ(json_int("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(json_int("NaN"));
  EXPECT_FALSE(json_int(R"({"a":1})"));
}

TEST(JsonValue, Strings) {
  EXPECT_EQ(json_string(R"("plain")"), "plain");
  EXPECT_EQ(json_string(R"( "a\u0000b\n\u00e9\ud83d\ude00" )"),
            std::string("a\0b\n\xc3\xa9\xf0\x9f\x98\x80", 10));
  EXPECT_EQ(json_string(R"("lone \ud800 surrogate")"), "lone \xef\xbf\xbd surrogate");
  EXPECT_EQ(json_string("\"bytes \xff\xfe kept\""), "bytes \xff\xfe kept");
  EXPECT_FALSE(json_string("12"));
  EXPECT_FALSE(json_string(R"("unterminated)"));
}

}  // namespace
}  // namespace flopline::trace
