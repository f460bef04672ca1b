#include "trace/gzip_stream.h"

#include <zlib.h>

#include <algorithm>

namespace flopline::trace {
namespace {

constexpr std::size_t kGrowStep = 1u << 20;     // ask for at least this much room at a time
constexpr std::size_t kMaxCall = 1u << 30;      // zlib counts in 32 bits
constexpr std::size_t kTextPerFeed = 4u << 20;  // feed() returns after about this much text
constexpr unsigned char kMagic0 = 0x1f, kMagic1 = 0x8b;

}  // namespace

struct GzipInflater::Zlib {
  z_stream zs{};
  bool started = false;
  ~Zlib() {
    if (started) inflateEnd(&zs);
  }
};

GzipInflater::GzipInflater(TextBuffer& out, std::uint64_t limit)
    : z_(std::make_unique<Zlib>()), out_(out), limit_(limit) {
  // 15 + 16: gzip members only; the caller saw the magic bytes.
  if (inflateInit2(&z_->zs, 15 + 16) == Z_OK) {
    z_->started = true;
  } else {
    stop("zlib could not start");
  }
}

GzipInflater::~GzipInflater() = default;

GzipInflater::State GzipInflater::stop(std::string why) {
  stopped_ = true;
  problem_ = std::move(why);
  return State::kStopped;
}

// After a member's end: another member, zero padding (tar and dd leave it, and gzip
// accepts it), or something else, which ends the data.
GzipInflater::State GzipInflater::between_members(std::string_view& in) {
  while (!in.empty() && in.front() == '\0') {
    in.remove_prefix(1);
    ++consumed_;
  }
  if (in.empty()) return State::kMore;
  if (static_cast<unsigned char>(in[0]) == kMagic0) {
    if (in.size() == 1) {  // the second magic byte is in the next piece
      pending_1f_ = true;
      in.remove_prefix(1);
      ++consumed_;
      return State::kMore;
    }
    if (static_cast<unsigned char>(in[1]) == kMagic1) {
      in_member_ = true;
      return State::kMore;
    }
  }
  return stop("what follows the gzip data at compressed byte " + std::to_string(consumed_) +
              " is not gzip (ignored)");
}

GzipInflater::State GzipInflater::feed(std::string_view& in) {
  if (stopped_) return State::kStopped;
  z_stream& zs = z_->zs;
  static const unsigned char kFirstMagic[1] = {kMagic0};
  std::string_view held;  // a 0x1f consumed by the last call, when this one starts a member
  if (pending_1f_ && !in.empty()) {
    pending_1f_ = false;
    if (static_cast<unsigned char>(in[0]) != kMagic1) {
      --consumed_;
      return stop("what follows the gzip data at compressed byte " + std::to_string(consumed_) +
                  " is not gzip (ignored)");
    }
    in_member_ = true;
    held = std::string_view(reinterpret_cast<const char*>(kFirstMagic), 1);
  }
  const std::size_t text_before = out_.size();
  while (!stopped_ && (!held.empty() || !in.empty()) && out_.size() - text_before < kTextPerFeed) {
    if (!in_member_) {
      if (between_members(in) == State::kStopped) break;
      continue;
    }
    std::string_view& src = held.empty() ? in : held;
    if (out_.room() == 0 && out_.size() < limit_ && !out_.reserve_more(kGrowStep)) {
      out_of_memory_ = true;
      stop("out of memory after inflating " + std::to_string(out_.size()) + " bytes");
      break;
    }
    const std::uint64_t room = std::min<std::uint64_t>(
        {out_.room(), limit_ - std::min<std::uint64_t>(limit_, out_.size()), kTextPerFeed});
    // At the limit, one byte of scratch tells whether the data really goes on or only
    // its trailer is left.
    unsigned char scratch = 0;
    const uInt in_chunk = static_cast<uInt>(std::min<std::size_t>(src.size(), kMaxCall));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src.data()));
    zs.avail_in = in_chunk;
    zs.next_out = room > 0 ? reinterpret_cast<Bytef*>(out_.tail()) : &scratch;
    zs.avail_out = room > 0 ? static_cast<uInt>(room) : 1u;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    const std::size_t used = in_chunk - zs.avail_in;
    const bool produced = zs.avail_out < (room > 0 ? room : 1u);
    if (room == 0 && produced) {
      hit_limit_ = true;
      stop("the text inflates to more than the limit of " + std::to_string(limit_) +
           " bytes (stopped at compressed byte " + std::to_string(consumed_) + ")");
      break;
    }
    if (room > 0) out_.grew_by(static_cast<std::size_t>(room - zs.avail_out));
    src.remove_prefix(used);
    consumed_ += used;
    if (rc == Z_BUF_ERROR && used == 0 && !produced) {  // cannot happen with room and input
      stop("the gzip data is corrupt at compressed byte " + std::to_string(consumed_));
    } else if (rc == Z_STREAM_END) {
      ++members_;
      in_member_ = false;
      inflateReset(&zs);
    } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR ||
               rc == Z_MEM_ERROR) {
      if (rc == Z_MEM_ERROR) out_of_memory_ = true;
      stop("the gzip data is corrupt at compressed byte " + std::to_string(consumed_) +
           (zs.msg ? std::string(" (") + zs.msg + ")" : std::string()));
    }
    // Z_OK and Z_BUF_ERROR: more input or more room; the loop provides either.
  }
  return stopped_ ? State::kStopped : State::kMore;
}

bool GzipInflater::finish() {
  if (stopped_) return problem_.empty();
  if (pending_1f_) {
    stop("what follows the gzip data at compressed byte " + std::to_string(consumed_ - 1) +
         " is not gzip (ignored)");
  } else if (in_member_) {
    stop("the gzip data is cut off at compressed byte " + std::to_string(consumed_) +
         " (the file is truncated)");
  }
  stopped_ = true;
  return problem_.empty();
}

}  // namespace flopline::trace
