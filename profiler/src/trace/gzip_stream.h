// Inflating gzip data handed in pieces, as it is read, into a TextBuffer.
//
// Concatenated members (what `cat a.gz b.gz` makes) continue the text. Damage never
// throws away what inflated before it: corrupt data, a cut-off member, or bytes after
// the last member that are not gzip stop the inflating, and problem() says where,
// while the text so far stays in the buffer for the reader (which then treats it like
// truncated JSON). The output grows only as data actually inflates, up to a limit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "trace/text_buffer.h"

namespace flopline::trace {

class GzipInflater {
 public:
  enum class State : std::uint8_t {
    kMore,     // wants more input
    kStopped,  // will take no more: see problem() (empty when the data just ended cleanly)
  };

  // `limit`: the most text it appends to `out` before it stops with a problem.
  GzipInflater(TextBuffer& out, std::uint64_t limit);
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  // Inflates from the front of `in` (the first call starts at the first member's magic),
  // removing what it used. It returns when `in` is used up or after a few MB of text,
  // so the caller can look at the text (and stop) before a bomb has gone off whole.
  State feed(std::string_view& in);
  // The input has ended. Returns the same as problem().empty() would say: true when
  // the last member was complete.
  bool finish();

  // Why inflating stopped early: "the gzip data is cut off at compressed byte N (the
  // file is truncated)", "the gzip data is corrupt at compressed byte N: invalid block
  // type", ... Empty while all is well.
  const std::string& problem() const { return problem_; }
  bool out_of_memory() const { return out_of_memory_; }
  bool hit_limit() const { return hit_limit_; }
  std::uint64_t consumed() const { return consumed_; }  // compressed bytes used
  std::uint32_t members() const { return members_; }    // members inflated to their end

 private:
  State between_members(std::string_view& in);
  State stop(std::string why);
  struct Zlib;
  std::unique_ptr<Zlib> z_;
  TextBuffer& out_;
  std::uint64_t limit_;
  std::uint64_t consumed_ = 0;
  std::uint32_t members_ = 0;
  bool in_member_ = true;    // false between a member's end and the next one's magic
  bool pending_1f_ = false;  // a 0x1f ended the last feed between members
  bool stopped_ = false;
  bool out_of_memory_ = false;
  bool hit_limit_ = false;
  std::string problem_;
};

}  // namespace flopline::trace
