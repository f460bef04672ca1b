// How an NVTX range tells flopline its FLOP and byte counts, from any language.
//
// 1. A suffix at the end of the range message (docs/NVTX.md has examples):
//
//      message = name blank* suffix blank*
//      suffix  = "[" blank* item (sep item)* blank* "]"
//      sep     = blank+ | blank* "," blank*
//      item    = key blank* "=" blank* number | wkey blank* "=" blank* word
//      key     = "flops" | "bytes"                  (ASCII, any letter case)
//      wkey    = "precision" | "plan"               (ASCII, any letter case)
//      word    = (letter | digit | "_")+            ("tf32", "bf16", "fp32", "float16"...)
//      number  = mantissa [exponent] [scale]
//      mantissa= digits ["." digits*] | "." digits
//      exponent= ("e" | "E") ["+" | "-"] digits
//      scale   = ("k" | "K" | "M" | "G" | "T" | "P") ["i"]
//      blank   = " " | "\t"
//
//    Scales are decimal (k = 1e3 ... P = 1e15) or, with "i", binary (Ki = 2^10 ...
//    Pi = 2^50). Each key at most once. The suffix is stripped from the name shown in
//    the trace ("matmul 4096 [flops=1.37e11 bytes=1e8]" shows as "matmul 4096"). The
//    precision goes to the range's args ("precision"), which is what "% of peak" needs
//    to pick the device peak (docs/STATS.md); the plan (which of a library's code paths
//    ran, e.g. flopline's fused matmul+softmax) goes to the args as "plan". A
//    bracket that does not follow the grammar exactly (an unknown key, a negative or
//    malformed number, a repeated key, text after "]") is not a suffix: the message is
//    left whole and gives no counts. Nothing is guessed.
//
// 2. An NVTX payload: a uint64, int64 (>= 0) or double (finite, >= 0) payload on the
//    range's start means FLOPs. A suffix's flops win over the payload.
//
// 3. PyTorch's emit_nvtx(record_shapes=True) names: see torch_nvtx.h.
//
// The C++ flopline::Range API writes its counts with format_range_message(), the same
// grammar, so every route is read by one parser.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "flopline/capture/records.h"

namespace flopline::capture {

struct RangeCounts {
  std::optional<double> flops;  // floating-point operations
  std::optional<double> bytes;  // bytes moved to or from memory
  std::string precision;        // "tf32", "bf16"...; empty when not given
  std::string plan;             // the code path that ran; empty when not given
  bool empty() const { return !flops && !bytes; }
};

struct ParsedRangeMessage {
  // The message without its suffix and the blanks before it; the whole message when
  // there is no valid suffix. May be empty when the message was only a suffix.
  std::string_view name;
  RangeCounts counts;
  bool has_suffix = false;  // a valid suffix was found and stripped
};

ParsedRangeMessage parse_range_message(std::string_view message);

// One number of the grammar above ("1.37e11", "4G", "2Mi"); nothing when malformed,
// negative or not finite.
std::optional<double> parse_count(std::string_view text);

// "name [flops=X bytes=Y]" with each value written so it reads back exactly (shortest
// round-trip decimal); only the counts given are written; the name alone when none.
// Negative or non-finite counts are left out.
std::string format_range_message(std::string_view name, const RangeCounts& counts);

// FLOPs carried by an NVTX payload, per rule 2 above.
std::optional<double> payload_flops(PayloadKind kind, std::uint64_t u64, std::int64_t i64,
                                    double f64);
inline std::optional<double> payload_flops(const MarkerRecord& m) {
  return payload_flops(m.payload_kind, m.payload_u64, m.payload_i64, m.payload_f64);
}

}  // namespace flopline::capture
