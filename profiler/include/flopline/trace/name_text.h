// Shortened names that stay apart: a table or legend shows kernel names cut to fit, and
// two templates that differ only past the cut (tile sizes, a flag at the end of the
// template arguments) must not read the same.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace flopline::trace {

// `shown[i]` is the shortened form of `full[i]`. Where two different full names have
// the same shown text, each of them gets the part of its full name where it differs
// from the others appended, in brackets ("foo<...> [..., false>(float*)]"), starting at
// the template argument or word that holds the first difference and at most
// `fragment_bytes` long; when that still leaves two the same, they are shown in full.
// Equal full names are left alone (they are one row's name). UTF-8 sequences are never cut.
void disambiguate_names(std::span<const std::string_view> full, std::span<std::string> shown,
                        std::size_t fragment_bytes = 48);

// `s` with every control byte (0x00-0x1f, 0x7f: ESC, BEL, LF...) replaced by '?', for
// names, categories and paths printed to a terminal: a trace's text must never move the
// cursor, retitle the window or break a table's rows.
std::string terminal_safe(std::string_view s);

}  // namespace flopline::trace
