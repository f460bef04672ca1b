// Whole-file input and crash-safe output, with gzip on both sides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace flopline::trace {

// Reads all of `path` into `out`, inflating it when it starts with the gzip magic
// bytes (whatever its name). On failure returns false and sets `error` to a reason
// without the path ("no such file", "gzip data is corrupt at byte N", ...).
bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error);

// Writes `data` to PATH.tmp, gzip-compressed when `gzip` is set, flushes, then renames
// to PATH. On failure removes PATH.tmp, leaves any old PATH alone, returns false and
// sets `error` to a reason.
bool write_file_atomic(const std::string& path, std::string_view data, bool gzip, int gzip_level,
                       std::string& error);

bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace flopline::trace
