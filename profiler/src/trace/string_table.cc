#include "flopline/trace/string_table.h"

#include <cstring>

namespace flopline::trace {
namespace {

constexpr std::size_t kChunkBytes = 1 << 20;

std::uint64_t load64(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

}  // namespace

// A small multiply-mix hash, 8 bytes a step: names are interned millions of times
// while reading, so the hash must be cheap on 20-200 byte kernel names.
std::uint64_t hash_bytes(std::string_view s) {
  constexpr std::uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
  std::uint64_t h = k0 ^ (s.size() * k1);
  const char* p = s.data();
  std::size_t n = s.size();
  while (n >= 16) {
    h = mix(load64(p) ^ k1, load64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  if (n >= 8) {
    h = mix(load64(p) ^ k1, h ^ k0);
    p += 8;
    n -= 8;
  }
  std::uint64_t tail = 0;
  if (n > 0) std::memcpy(&tail, p, n);
  return mix(tail ^ k1 ^ n, h ^ k0);
}

StringTable::StringTable() {
  index_.assign(1024, kNone);
  intern(std::string_view());  // id 0 is ""
}
StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;
StringTable::~StringTable() = default;

const char* StringTable::store(std::string_view s) {
  if (s.empty()) return "";
  if (s.size() > kChunkBytes / 4) {  // big strings get an allocation of their own
    big_strings_.emplace_back(new char[s.size()]);
    std::memcpy(big_strings_.back().get(), s.data(), s.size());
    big_bytes_ += s.size();
    return big_strings_.back().get();
  }
  if (chunks_.empty() || chunk_used_ + s.size() > chunk_size_) {
    chunks_.emplace_back(new char[kChunkBytes]);
    chunk_size_ = kChunkBytes;
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  std::memcpy(dst, s.data(), s.size());
  chunk_used_ += s.size();
  return dst;
}

void StringTable::grow_index() {
  std::vector<std::uint32_t> bigger(index_.size() * 2, kNone);
  const std::size_t mask = bigger.size() - 1;
  for (std::uint32_t id = 0; id < views_.size(); ++id) {
    std::size_t slot = hashes_[id] & mask;
    while (bigger[slot] != kNone) slot = (slot + 1) & mask;
    bigger[slot] = id;
  }
  index_.swap(bigger);
}

StringId StringTable::find(std::string_view s) const {
  const std::uint64_t h = hash_bytes(s);
  const std::size_t mask = index_.size() - 1;
  for (std::size_t slot = h & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t id = index_[slot];
    if (id == kNone) return kNone;
    if (hashes_[id] == h && views_[id] == s) return id;
  }
}

StringId StringTable::intern(std::string_view s) {
  const std::uint64_t h = hash_bytes(s);
  std::size_t mask = index_.size() - 1;
  std::size_t slot = h & mask;
  for (;; slot = (slot + 1) & mask) {
    const std::uint32_t id = index_[slot];
    if (id == kNone) break;
    if (hashes_[id] == h && views_[id] == s) return id;
  }
  const auto id = static_cast<StringId>(views_.size());
  views_.emplace_back(store(s), s.size());
  hashes_.push_back(h);
  index_[slot] = id;
  if (views_.size() * 2 > index_.size()) grow_index();  // load factor <= 1/2
  return id;
}

std::size_t StringTable::resident_bytes() const {
  return chunks_.size() * kChunkBytes + big_bytes_ + views_.capacity() * sizeof(std::string_view) +
         hashes_.capacity() * sizeof(std::uint64_t) + index_.capacity() * sizeof(std::uint32_t);
}

}  // namespace flopline::trace
