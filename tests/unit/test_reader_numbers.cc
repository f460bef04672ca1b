// Number text -> integer nanoseconds, exactly, without floating point.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "trace/time_text.h"

namespace flopline::trace {
namespace {

std::int64_t us(std::string_view text) {
  std::int64_t ns = 0;
  EXPECT_EQ(micros_to_ns(text, ns), NumberStatus::kOk) << text;
  return ns;
}

NumberStatus status(std::string_view text) {
  std::int64_t ns = 0;
  return micros_to_ns(text, ns);
}

TEST(ReaderNumbers, MicrosecondsToNanoseconds) {
  EXPECT_EQ(us("0"), 0);
  EXPECT_EQ(us("1"), 1000);
  EXPECT_EQ(us("1623142623460016"), 1623142623460016000);
  EXPECT_EQ(us("1712195495519695.8"),
            1712195495519695800);  // a double gives ...695808 or ...695744
  EXPECT_EQ(us("1712195495519695.812"), 1712195495519695812);
  EXPECT_EQ(us("4203669603018.756"), 4203669603018756);
  EXPECT_EQ(us("1124609194129.6716"), 1124609194129672);  // .6 rounds up
  EXPECT_EQ(us("1.1"), 1100);
  EXPECT_EQ(us("-3.25"), -3250);
  EXPECT_EQ(us("0.0004"), 0);
  EXPECT_EQ(us("0.0005"), 1);  // half away from zero
  EXPECT_EQ(us("-0.0005"), -1);
  EXPECT_EQ(us("2.4995"), 2500);  // only the first dropped digit decides
  EXPECT_EQ(us("2.49949999"), 2499);
  EXPECT_EQ(us("00012"), 12000);
  EXPECT_EQ(us(" 12 "), 12000);  // string contents
  EXPECT_EQ(us("+5"), 5000);
  EXPECT_EQ(us(".5"), 500);
}

TEST(ReaderNumbers, Exponents) {
  EXPECT_EQ(us("1.69e15"), 1690000000000000000);
  EXPECT_EQ(us("1.69E+15"), 1690000000000000000);
  EXPECT_EQ(us("1712195495519695812e-3"), 1712195495519695812);
  EXPECT_EQ(us("5e-4"), 1);
  EXPECT_EQ(us("4e-4"), 0);
  EXPECT_EQ(us("1e-999999999"), 0);
  EXPECT_EQ(us("0e999999999"), 0);
  EXPECT_EQ(us("123456e-9"), 0);
  EXPECT_EQ(us("1.5e0"), 1500);
}

TEST(ReaderNumbers, Limits) {
  EXPECT_EQ(us("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(us("-9223372036854775.807"), -INT64_MAX);
  EXPECT_EQ(status("9223372036854775.808"), NumberStatus::kOutOfRange);
  EXPECT_EQ(status("18446744073709551616"), NumberStatus::kOutOfRange);
  EXPECT_EQ(status("1e999999999"), NumberStatus::kOutOfRange);
  EXPECT_EQ(status(std::string(5000, '9')), NumberStatus::kOutOfRange);
  std::int64_t v = 0;
  EXPECT_EQ(decimal_to_int("9223372036854775807", 0, v), NumberStatus::kOk);
  EXPECT_EQ(v, INT64_MAX);
}

TEST(ReaderNumbers, NotNumbers) {
  for (const char* bad : {"", " ", "-", "1.2.3", "1e", "1e+", "0x10", "12abc", "--1", "1 2", "."}) {
    EXPECT_EQ(status(bad), NumberStatus::kNotANumber) << bad;
  }
  for (const char* nf : {"nan", "NaN", "inf", "-Infinity", "INF"}) {
    EXPECT_EQ(status(nf), NumberStatus::kNonFinite) << nf;
  }
}

TEST(ReaderNumbers, Ids) {
  std::uint64_t id = 0;
  ASSERT_TRUE(parse_id("0xaf4f9533f4c9b7e7", id));
  EXPECT_EQ(id, 0xaf4f9533f4c9b7e7ull);
  ASSERT_TRUE(parse_id("18446744073709551615", id));
  EXPECT_EQ(id, UINT64_MAX);
  ASSERT_TRUE(parse_id("-1", id));
  EXPECT_EQ(id, UINT64_MAX);
  EXPECT_FALSE(parse_id("0x1234567890abcdef0", id));  // 17 hex digits
  EXPECT_FALSE(parse_id("us", id));
  EXPECT_FALSE(parse_id("", id));
  std::int64_t i = 0;
  EXPECT_TRUE(parse_int64("-25738", i));
  EXPECT_EQ(i, -25738);
  EXPECT_FALSE(parse_int64("25738.0", i));
  EXPECT_FALSE(parse_int64("9223372036854775808", i));
}

TEST(ReaderNumbers, Doubles) {
  double d = 0;
  ASSERT_TRUE(parse_double("2e9", d));
  EXPECT_EQ(d, 2e9);
  ASSERT_TRUE(parse_double("-Infinity", d));
  EXPECT_TRUE(d < 0 && d * 0 != 0);
  ASSERT_TRUE(parse_double("1e999", d));
  EXPECT_GT(d, 1e308);
  ASSERT_TRUE(parse_double("1e-999", d));
  EXPECT_EQ(d, 0);
  EXPECT_FALSE(parse_double("x", d));
}

}  // namespace
}  // namespace flopline::trace
