#include "trace/text_format.h"

#include <cstdint>
#include <cstring>

namespace flopline::trace {
namespace {

bool starts_with_bytes(std::string_view s, const char* bytes, std::size_t n) {
  return s.size() >= n && std::memcmp(s.data(), bytes, n) == 0;
}

bool is_ascii_text(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x09 && u < 0x80 && u != 0x7f;
}

std::string convert_hint(const char* name) {
  return std::string(": flopline reads UTF-8 JSON (convert it: iconv -f ") + name + " -t UTF-8)";
}

}  // namespace

std::string unsupported_text_encoding(std::string_view h) {
  // Byte order marks; UTF-32's before UTF-16's, whose LE mark starts UTF-32LE's.
  if (starts_with_bytes(h, "\x00\x00\xfe\xff", 4)) {
    return "the text is UTF-32 (big-endian, with a byte order mark)" + convert_hint("UTF-32");
  }
  if (starts_with_bytes(h, "\xff\xfe\x00\x00", 4)) {
    return "the text is UTF-32 (little-endian, with a byte order mark)" + convert_hint("UTF-32");
  }
  if (starts_with_bytes(h, "\xfe\xff", 2)) {
    return "the text is UTF-16 (big-endian, with a byte order mark)" + convert_hint("UTF-16");
  }
  if (starts_with_bytes(h, "\xff\xfe", 2)) {
    return "the text is UTF-16 (little-endian, with a byte order mark)" + convert_hint("UTF-16");
  }
  if (h.size() < 4) return "";
  const bool z0 = h[0] == '\0', z1 = h[1] == '\0', z2 = h[2] == '\0', z3 = h[3] == '\0';
  if (!z0 && z1 && z2 && z3 && is_ascii_text(h[0])) {
    return "the text is UTF-32 (little-endian, no byte order mark)" + convert_hint("UTF-32LE");
  }
  if (z0 && z1 && z2 && !z3 && is_ascii_text(h[3])) {
    return "the text is UTF-32 (big-endian, no byte order mark)" + convert_hint("UTF-32BE");
  }
  if (!z0 && z1 && !z2 && z3 && is_ascii_text(h[0]) && is_ascii_text(h[2])) {
    return "the text is UTF-16 (little-endian, no byte order mark)" + convert_hint("UTF-16LE");
  }
  if (z0 && !z1 && z2 && !z3 && is_ascii_text(h[1]) && is_ascii_text(h[3])) {
    return "the text is UTF-16 (big-endian, no byte order mark)" + convert_hint("UTF-16BE");
  }
  return "";
}

std::string describe_binary_start(std::string_view h) {
  struct Signature {
    const char* bytes;
    std::size_t n;
    const char* what;
  };
  static const Signature kSignatures[] = {
      {"\x1f\x8b", 2, "gzip data inside the text: the file was compressed twice (zcat it once)"},
      {"\x28\xb5\x2f\xfd", 4, "zstd-compressed data: flopline reads gzip only (zstd -d FILE)"},
      {"\xfd\x37\x7a\x58\x5a\x00", 6, "xz-compressed data: flopline reads gzip only (xz -d FILE)"},
      {"\x04\x22\x4d\x18", 4, "lz4-compressed data: flopline reads gzip only (lz4 -d FILE)"},
      {"PK\x03\x04", 4, "a zip archive: unzip it first"},
      {"\x37\x7a\xbc\xaf\x27\x1c", 6, "a 7z archive: extract it first"},
      {"SQLite format 3\0", 16, "an SQLite database, not Chrome-trace JSON"},
  };
  for (const Signature& s : kSignatures) {
    if (starts_with_bytes(h, s.bytes, s.n)) return s.what;
  }
  if (h.size() >= 4 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h' && h[3] >= '1' && h[3] <= '9') {
    return "bzip2-compressed data: flopline reads gzip only (bzip2 -d FILE)";
  }
  // zlib's header with a 32 KB window and each of the four compression levels zlib
  // writes ("x\x9c" is the default); other valid headers are rare enough to leave.
  if (h.size() >= 2 && h[0] == 'x') {
    const auto flg = static_cast<unsigned char>(h[1]);
    if (flg == 0x01 || flg == 0x5e || flg == 0x9c || flg == 0xda) {
      return "zlib-compressed data without a gzip header: flopline reads gzip only";
    }
  }
  if (!h.empty() && h[0] == '\0') return "binary data (it starts with a NUL byte)";
  return "";
}

}  // namespace flopline::trace
