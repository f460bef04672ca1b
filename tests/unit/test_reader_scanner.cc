// The tolerant JSON tokenizer under the reader: what it accepts, what it rejects,
// and how it re-writes lax JSON as strict JSON for storage.
#include <gtest/gtest.h>

#include <string>

#include "trace/json_scanner.h"

namespace flopline::trace::json {
namespace {

// Skips one value; returns the reason on failure, "" on success, plus the laxness.
std::string skip(std::string_view text, Laxness* lax = nullptr) {
  Scanner s(text);
  if (!s.skip_value()) return s.error_reason();
  if (lax) *lax = s.laxness();
  s.skip_ws();
  return s.eof() ? "" : "trailing text";
}

TEST(ReaderScanner, AcceptsJsonAndTolerance) {
  for (const char* ok : {"1", "-0.5e-3", "\"s\"", "true", "null", "[]", "{}", "[1,[2,{\"a\":[]}]]",
                         "{\"a\":{\"b\":\"\\\"}\"}}", "007"}) {
    EXPECT_EQ(skip(ok), "") << ok;
  }
  Laxness lax;
  EXPECT_EQ(skip("[1,2,]", &lax), "");
  EXPECT_TRUE(lax.trailing_comma);
  EXPECT_EQ(skip("{\"a\":NaN,\"b\":-Infinity,\"c\":inf}", &lax), "");
  EXPECT_TRUE(lax.non_finite);
  EXPECT_EQ(skip("\"tab\there\"", &lax), "");
  EXPECT_TRUE(lax.control_char);
  EXPECT_EQ(skip("\"\xff\xfe\"", &lax), "");  // invalid UTF-8 is kept, not judged
  EXPECT_FALSE(lax.any());
}

TEST(ReaderScanner, Rejects) {
  EXPECT_EQ(skip(""), "expected a value, found the end of the text");
  EXPECT_EQ(skip("\"abc"), "unterminated string");
  EXPECT_EQ(skip("\"abc\\"), "unterminated string");
  EXPECT_EQ(skip("[1 2]"), "expected ',' or ']', found '2'");
  EXPECT_EQ(skip("{\"a\" 1}"), "expected ':' after an object key, found '1'");
  EXPECT_EQ(skip("{1:2}"), "expected a string key, found '1'");
  EXPECT_EQ(skip("[1,"), "the text ends inside an array");
  EXPECT_EQ(skip("{\"a\":1"), "the text ends inside an object");
  EXPECT_EQ(skip("tru"), "unknown word 'tru'");
  EXPECT_EQ(skip("1."), "malformed number");
  EXPECT_EQ(skip("-"), "expected a value, found the end of the text");
  EXPECT_EQ(skip("[1]]"), "trailing text");
  EXPECT_EQ(skip(std::string(1001, '[') + std::string(1001, ']')),
            "nesting deeper than 1000 levels");
  EXPECT_EQ(skip(std::string(1000, '[') + std::string(1000, ']')), "");
}

TEST(ReaderScanner, ErrorPositions) {
  const std::string text = "{\n  \"a\": [1,\n  2 3]}";
  Scanner s(text);
  ASSERT_FALSE(s.skip_value());
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  line_column(text, static_cast<std::uint64_t>(s.error_at() - text.data()), line, column);
  EXPECT_EQ(line, 3u);
  EXPECT_EQ(column, 5u);
}

TEST(ReaderScanner, WriteStrict) {
  std::string out;
  Scanner::write_strict("{ \"a\" : [1, NaN, -inf ,], \"b\":{\"c\":\"x\ty\",},}", out);
  EXPECT_EQ(out, "{\"a\":[1,null,null],\"b\":{\"c\":\"x\\u0009y\"}}");
}

TEST(ReaderScanner, DecodeEscapes) {
  std::string out;
  Scanner::decode_escapes("a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00\\x", out);
  EXPECT_EQ(out, "a\"b\\c/d\b\f\n\r\tA\\u00\\x");
}

TEST(ReaderScanner, WalksObjectsAndArrays) {
  Scanner s("{\"k1\":1, \"k2\":[true,false,],}");
  ASSERT_TRUE(s.consume('{'));
  bool first = true;
  Token key;
  std::string keys;
  while (s.next_member(first, key)) {
    keys += key.text();
    ASSERT_TRUE(s.skip_value());
  }
  EXPECT_FALSE(s.failed());
  EXPECT_EQ(keys, "k1k2");
  EXPECT_TRUE(s.laxness().trailing_comma);
}

}  // namespace
}  // namespace flopline::trace::json
