// The corpus of traces other tools wrote (FLOPLINE_CORPUS_DIR, ../shared/corpus/traces
// beside a checkout of this team's). A clone without it still builds and tests: the
// tests that read it skip, saying where they looked.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace flopline::testing {

inline bool corpus_present() {
  std::error_code ec;
  return std::filesystem::exists(std::string(FLOPLINE_CORPUS_DIR) + "/SOURCES.md", ec);
}

}  // namespace flopline::testing

// At the top of a test (or a fixture's SetUp): skip when the corpus is not there.
#define FLOPLINE_SKIP_WITHOUT_CORPUS()                                                  \
  do {                                                                                  \
    if (!::flopline::testing::corpus_present())                                         \
      GTEST_SKIP() << "no corpus at " FLOPLINE_CORPUS_DIR                               \
                      " (configure with -DFLOPLINE_CORPUS_DIR=DIR to run these tests)"; \
  } while (0)
