// The JSON string escaper, UTF-8 repair, number formatting and JSON compaction.
// Expected texts are written out by hand from the JSON and Unicode specifications.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>

#include "flopline/trace/json_text.h"

namespace flopline::trace {
namespace {

using namespace std::string_literals;

std::string esc(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string us3(TimeNs ns) {
  std::string out;
  append_us3(out, ns);
  return out;
}

std::string dbl(double v) {
  std::string out;
  append_double(out, v);
  return out;
}

std::string compact(std::string_view s) {
  std::string out;
  append_json_compact(out, s);
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";

// Concatenation by appends: GCC 12's -Wrestrict misfires on "literal" + std::string
// at -O3 (GCC bug 105329), and CI treats warnings as errors.
template <class... T>
std::string cat(const T&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

TEST(JsonString, PlainTextIsQuotedOnly) {
  EXPECT_EQ(esc(""), "\"\"");
  EXPECT_EQ(esc("a"), "\"a\"");
  EXPECT_EQ(esc("ampere_sgemm_128x64_nn"), "\"ampere_sgemm_128x64_nn\"");
  EXPECT_EQ(esc("void at::native::f<4, float>(int)"), "\"void at::native::f<4, float>(int)\"");
}

TEST(JsonString, QuotesAndBackslashes) {
  EXPECT_EQ(esc("\""), R"("\"")");
  EXPECT_EQ(esc("\\"), R"("\\")");
  EXPECT_EQ(esc(R"(a"b\c)"), R"("a\"b\\c")");
  // At every position of an 8-byte block, so the SWAR scan's lane logic is exercised.
  for (std::size_t pos = 0; pos < 20; ++pos) {
    std::string in(20, 'x');
    in[pos] = '"';
    const std::string want =
        cat("\"", std::string(pos, 'x'), "\\\"", std::string(19 - pos, 'x'), "\"");
    EXPECT_EQ(esc(in), want) << pos;
  }
}

TEST(JsonString, EveryControlCharacter) {
  for (int c = 0; c < 0x20; ++c) {
    std::string want;
    switch (c) {
      case '\b':
        want = "\\b";
        break;
      case '\f':
        want = "\\f";
        break;
      case '\n':
        want = "\\n";
        break;
      case '\r':
        want = "\\r";
        break;
      case '\t':
        want = "\\t";
        break;
      default: {
        static const char* hex = "0123456789abcdef";
        want = "\\u00";
        want += hex[c >> 4];
        want += hex[c & 15];
      }
    }
    EXPECT_EQ(esc(std::string(1, static_cast<char>(c))), cat("\"", want, "\"")) << c;
    EXPECT_EQ(esc(cat("abcdefgh", std::string(1, static_cast<char>(c)), "ijklmnop")),
              cat("\"abcdefgh", want, "ijklmnop\""))
        << c;
  }
  EXPECT_EQ(esc("a\0b"s), R"("a\u0000b")");
  EXPECT_EQ(esc("line1\nline2\r\n"), R"("line1\nline2\r\n")");
  EXPECT_EQ(esc("\x7f"), "\"\x7f\"");  // DEL needs no escape in JSON
}

TEST(JsonString, ValidUtf8PassesThrough) {
  const std::string s =
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xED\x9F\xBF \xEE\x80\x80 \xF4\x8F\xBF\xBF";
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_EQ(esc(s), cat("\"", s, "\""));
  // Boundaries: U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF.
  for (const std::string& cp : {"\xC2\x80"s, "\xDF\xBF"s, "\xE0\xA0\x80"s, "\xEF\xBF\xBF"s,
                                "\xF0\x90\x80\x80"s, "\xF4\x8F\xBF\xBF"s}) {
    EXPECT_TRUE(is_valid_utf8(cp));
    EXPECT_EQ(esc(cp), cat("\"", cp, "\""));
  }
}

struct Invalid {
  std::string in;
  std::string want;  // content between the quotes
};

TEST(JsonString, InvalidUtf8BecomesReplacementPerMaximalSubpart) {
  const Invalid cases[] = {
      {"\x80", kFffd},  // lone continuation
      {"a\xBF"
       "b",
       cat("a", kFffd, "b")},                               //
      {"\x80\x80", kFffd + kFffd},                          // each continuation alone
      {"\xC3", kFffd},                                      // truncated 2-byte at end
      {"\xC3x", kFffd + "x"},                               // truncated, then ASCII
      {"\xE2\x82", kFffd},                                  // truncated 3-byte: one U+FFFD
      {"\xE2\x82x", kFffd + "x"},                           //
      {"\xF0\x9F\x98", kFffd},                              // truncated 4-byte: one U+FFFD
      {"\xF0\x9F\x98x", kFffd + "x"},                       //
      {"\xC0\x80", kFffd + kFffd},                          // overlong NUL
      {"\xC1\xBF", kFffd + kFffd},                          // overlong
      {"\xE0\x80\x80", kFffd + kFffd + kFffd},              // overlong 3-byte
      {"\xF0\x80\x80\x80", kFffd + kFffd + kFffd + kFffd},  // overlong 4-byte
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},              // surrogate U+D800
      {"\xED\xBF\xBF", kFffd + kFffd + kFffd},              // surrogate U+DFFF
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // U+110000
      {"\xF5\x80\x80\x80", kFffd + kFffd + kFffd + kFffd},  // lead byte above F4
      {"\xFF", kFffd},                                      //
      {"\xFE\xFF", kFffd + kFffd},                          //
      {"\xE2\x82\xAC\x80", cat("\xE2\x82\xAC", kFffd)},     // valid then stray
      {"\xC3\"", kFffd + "\\\""},                           // truncated before a quote
      {"\xE2\x82\n", kFffd + "\\n"},                        // truncated before a control
  };
  for (const Invalid& c : cases) {
    EXPECT_FALSE(is_valid_utf8(c.in)) << testing::PrintToString(c.in);
    const std::string out = esc(c.in);
    EXPECT_EQ(out, cat("\"", c.want, "\"")) << testing::PrintToString(c.in);
    EXPECT_TRUE(is_valid_utf8(out));
    // The same bytes deep inside a long run take the 8-byte path.
    const std::string pad(13, 'p');
    EXPECT_EQ(esc(cat(pad, c.in, pad)), cat("\"", pad, c.want, pad, "\""))
        << testing::PrintToString(c.in);
  }
}

TEST(JsonString, HundredKilobyteName) {
  std::string name;
  std::string want = "\"";
  for (int i = 0; name.size() < 100 * 1024; ++i) {
    name += cat("void kernel<", std::to_string(i), ", \"q\", \\path\\>\n");
    want += cat("void kernel<", std::to_string(i), ", \\\"q\\\", \\\\path\\\\>\\n");
  }
  want += "\"";
  EXPECT_EQ(esc(name), want);
}

// Any bytes at all: the output is valid UTF-8 with no raw control bytes, every quote
// and backslash inside is escaped, and the escaper agrees with a byte-at-a-time model.
TEST(JsonString, RandomBytesGiveValidJsonStrings) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    std::string in(rng() % 40, '\0');
    for (char& c : in) {
      const unsigned r = rng() % 8;
      c = static_cast<char>(r < 3 ? 'a' + rng() % 26 : r < 4 ? rng() % 0x20 : rng() % 256);
    }
    const std::string out = esc(in);
    ASSERT_GE(out.size(), 2u);
    EXPECT_TRUE(is_valid_utf8(out)) << testing::PrintToString(in);
    for (std::size_t i = 1; i + 1 < out.size(); ++i) {
      ASSERT_GE(static_cast<unsigned char>(out[i]), 0x20) << testing::PrintToString(in);
      if (out[i] == '\\') {
        ++i;  // the escaped character
        ASSERT_NE(std::string_view("\"\\bfnrtu").find(out[i]), std::string_view::npos);
      } else {
        ASSERT_NE(out[i], '"') << testing::PrintToString(in);
      }
    }
    // Valid input: output minus escapes is the input.
    if (is_valid_utf8(in) &&
        in.find_first_of("\"\\"s + std::string(1, '\0')) == std::string::npos) {
      bool has_control = false;
      for (char c : in) has_control |= static_cast<unsigned char>(c) < 0x20;
      if (!has_control) {
        EXPECT_EQ(out, cat("\"", in, "\""));
      }
    }
  }
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii text, longer than eight bytes"));
  EXPECT_TRUE(is_valid_utf8("\0"s));
  EXPECT_FALSE(is_valid_utf8("0123456789abcdef\x80"));
  EXPECT_FALSE(is_valid_utf8("\xEF\xBF"));
}

TEST(Us3, EdgeValues) {
  EXPECT_EQ(us3(0), "0.000");
  EXPECT_EQ(us3(1), "0.001");
  EXPECT_EQ(us3(-1), "-0.001");
  EXPECT_EQ(us3(-5), "-0.005");
  EXPECT_EQ(us3(999), "0.999");
  EXPECT_EQ(us3(1000), "1.000");
  EXPECT_EQ(us3(-1000), "-1.000");
  EXPECT_EQ(us3(1001), "1.001");
  EXPECT_EQ(us3(1010), "1.010");
  EXPECT_EQ(us3(1100), "1.100");
  EXPECT_EQ(us3(1234567), "1234.567");
  EXPECT_EQ(us3(-1234567), "-1234.567");
  EXPECT_EQ(us3(1700000000123456789), "1700000000123456.789");
  EXPECT_EQ(us3(std::numeric_limits<std::int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(us3(std::numeric_limits<std::int64_t>::min()), "-9223372036854775.808");
  EXPECT_EQ(us3(std::numeric_limits<std::int64_t>::min() + 1), "-9223372036854775.807");
  EXPECT_LE(us3(std::numeric_limits<std::int64_t>::min()).size(), kMaxUs3Chars);
}

TEST(Us3, MatchesDivisionForEveryDigitCount) {
  std::int64_t v = 1;
  for (int digits = 1; digits <= 18; ++digits, v *= 10) {
    for (std::int64_t x : {v, v - 1, v + 7, 3 * v + 11}) {
      for (std::int64_t s : {x, -x}) {
        const std::int64_t q = s / 1000, r = s % 1000;
        std::string frac = std::to_string(r < 0 ? -r : r);
        const std::string want = cat(s < 0 ? "-" : "", std::to_string(q < 0 ? -q : q), ".",
                                     std::string(3 - frac.size(), '0'), frac);
        EXPECT_EQ(us3(s), want) << s;
      }
    }
  }
}

TEST(Integers, AllDigitCountsAndExtremes) {
  std::uint64_t v = 1;
  for (int digits = 1; digits <= 20; ++digits) {
    for (std::uint64_t x : {v, v - 1, v + 1, v * 9 / 10 * 10 + 9}) {
      std::string out;
      append_uint(out, x);
      EXPECT_EQ(out, std::to_string(x));
    }
    if (digits < 20) v *= 10;
  }
  for (std::int64_t x :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{9}, std::int64_t{-10},
        std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()}) {
    std::string out;
    append_int(out, x);
    EXPECT_EQ(out, std::to_string(x));
  }
  std::string out;
  append_uint(out, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(out, "18446744073709551615");
}

TEST(Doubles, ShortestRoundTripAndNull) {
  EXPECT_EQ(dbl(0), "0");
  EXPECT_EQ(dbl(1), "1");
  EXPECT_EQ(dbl(-3), "-3");
  EXPECT_EQ(dbl(0.1), "0.1");
  EXPECT_EQ(dbl(1.5e-7), "1.5e-07");
  EXPECT_EQ(dbl(123456789012.0), "123456789012");
  EXPECT_EQ(dbl(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(dbl(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(dbl(-std::numeric_limits<double>::infinity()), "null");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const double x =
        std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 100);
    const std::string s = dbl(i % 2 ? -x : x);
    EXPECT_EQ(std::stod(s), i % 2 ? -x : x) << s;
    EXPECT_LE(s.size(), kMaxDoubleChars);
  }
}

TEST(Compact, StrictJsonOnOneLine) {
  EXPECT_EQ(compact("{ \"a\" : 1 ,\n \"b\" : [ 1 , 2 ] }"), R"({"a":1,"b":[1,2]})");
  EXPECT_EQ(compact(R"({"s":"keep  spaces \" \\ \n \u00e9"})"),
            R"({"s":"keep  spaces \" \\ \n \u00e9"})");
  EXPECT_EQ(
      compact("{\"x\":nan,\"y\":-inf,\"z\":Infinity,\"w\":NaN,\"t\":true,\"f\":false,\"n\":null}"),
      R"({"x":null,"y":null,"z":null,"w":null,"t":true,"f":false,"n":null})");
  EXPECT_EQ(compact("{\"n\":-1.5e+10,\"m\":2E-3}"), R"({"n":-1.5e+10,"m":2E-3})");
  EXPECT_EQ(compact("{\"raw\":\"tab\there\nnl\"}"), R"({"raw":"tab\there\nnl"})");
  EXPECT_EQ(compact("{\"bad\":\"\xC0\x80\"}"), cat("{\"bad\":\"", kFffd, kFffd, "\"}"));
  EXPECT_EQ(compact(R"({"esc":"\x"})"), R"({"esc":"\\x"})");  // stray backslash
  EXPECT_EQ(compact("\"unterminated"), "\"unterminated\"");
  EXPECT_TRUE(is_printable_ascii(R"({"a":[1,2],"b":"c"})"));
  EXPECT_FALSE(is_printable_ascii("{\"a\":\n1}"));
  EXPECT_FALSE(is_printable_ascii("{\"a\":\"\xC3\xA9\"}"));
}

}  // namespace
}  // namespace flopline::trace
