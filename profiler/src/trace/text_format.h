// Naming what a file is when it is not UTF-8 JSON, from its first bytes, so the
// reader's error says "zstd-compressed data" or "UTF-16 text" instead of "found byte
// 0x28". Pure functions of the bytes.
#pragma once

#include <string>
#include <string_view>

namespace flopline::trace {

// When `head` (the text's first bytes; 4 are enough) is UTF-16 or UTF-32 text, with
// or without a byte order mark, what it is and how to convert it; else "". JSON that
// starts with an ASCII byte has NUL bytes among its first four only in these encodings.
std::string unsupported_text_encoding(std::string_view head);

// When `head` starts with the signature of a compressed or archive format flopline
// does not read (zstd, xz, bzip2, lz4, zlib without gzip's header, zip, 7z, gzip
// inside the text, SQLite) or with a NUL byte, what it is; else "".
std::string describe_binary_start(std::string_view head);

}  // namespace flopline::trace
