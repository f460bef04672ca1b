#include "counted_info.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "flopline/trace/counted_basis.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/trace_args.h"

namespace flopline::viewer {
namespace {

const InfoLine* find_arg(const SliceInfo& info, std::string_view key) {
  for (const InfoLine& a : info.args) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::optional<double> number_arg(const SliceInfo& info, std::string_view key) {
  const InfoLine* a = find_arg(info, key);
  if (a == nullptr) return std::nullopt;
  return trace::json_number(a->value);
}

// An object of numbers ({"bf16": 1e9, "fp32": 2e6}) as indented lines, largest first,
// each with its share of the total.
void add_breakdown(std::vector<InfoLine>& out, const SliceInfo& info, std::string_view key,
                   const char* title, const char* unit) {
  const InfoLine* a = find_arg(info, key);
  if (a == nullptr) return;
  std::vector<std::pair<std::string, double>> parts;
  double total = 0;
  for (const auto& [k, raw] : trace::json_members(a->value)) {
    const std::optional<double> v = trace::json_number(raw);
    if (!v || !std::isfinite(*v)) continue;
    parts.emplace_back(k, *v);
    total += *v;
  }
  if (parts.empty()) return;
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  out.push_back({title, ""});
  for (const auto& [k, v] : parts) {
    std::string value = format_si(v) + unit;
    if (parts.size() > 1 && total > 0) {
      char share[32];
      std::snprintf(share, sizeof share, " (%.0f%%)", 100.0 * v / total);
      value += share;
    }
    out.push_back({"  " + k, value});
  }
}

// "+3.2%" from declared to counted.
std::string difference(double counted, double declared) {
  if (declared <= 0) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "; declared %s, %+.1f%%", format_si(declared).c_str(),
                100.0 * (counted - declared) / declared);
  return buf;
}

}  // namespace

std::string flops_source_words(std::string_view source, bool replayed, bool kernel) {
  using trace::CountedBasis;
  const CountedBasis basis = trace::counted_basis(source);
  if (!kernel) {
    switch (basis) {
      case CountedBasis::kMeasured:
        return "hardware counters, the sum of its kernels', each measured";
      case CountedBasis::kSameWork:
        return "hardware counters, the sum of its kernels', some inferred from measured launches "
               "of the same work";
      case CountedBasis::kEstimated:
        return "hardware counters, the sum of its kernels', some estimated from launches that may "
               "not be the same work";
      default:
        break;
    }
  }
  switch (basis) {
    case CountedBasis::kMeasured:
      return replayed ? "hardware counters, this launch measured by replay (its duration is the "
                        "replay's: leave it out of timings)"
                      : "hardware counters, this launch measured";
    case CountedBasis::kSameWork:
      return "hardware counters, inferred from a measured launch of the same work (function, "
             "grid, block, shared memory and arguments)";
    case CountedBasis::kEstimated:
      return "hardware counters, estimated: the values of a measured launch that may not be the "
             "same work (see the counters note)";
    case CountedBasis::kNotCounted:
      return std::string(source) + " (never replayed)";
    case CountedBasis::kNoCounts:
      break;
  }
  if (source == "declared") return "declared (API, NVTX range or trace arg)";
  if (source == "shapes") return "computed from the operator's shapes";
  return std::string(source);
}

std::vector<InfoLine> counted_info(const SliceInfo& info) {
  std::vector<InfoLine> out;
  const InfoLine* source = find_arg(info, trace::kArgFlopsSource);
  const InfoLine* replayed = find_arg(info, "counters replayed");
  if (source != nullptr) {
    out.push_back(
        {"FLOPs from",
         flops_source_words(source->value, replayed != nullptr && replayed->value == "true",
                            info.category == "kernel")});
  }
  if (const InfoLine* note = find_arg(info, trace::kCountersNoteArg)) {
    out.push_back({"counters note", note->value});
  }
  add_breakdown(out, info, "flops by precision", "FLOPs by precision", "");
  add_breakdown(out, info, "tensor flops by path", "tensor FLOPs by path", "");
  if (auto r = number_arg(info, "dram bytes read"))
    out.push_back({"DRAM read", format_si(*r) + "B"});
  if (auto w = number_arg(info, "dram bytes written"))
    out.push_back({"DRAM written", format_si(*w) + "B"});
  if (auto s = number_arg(info, "sparse tensor ops"))
    out.push_back({"sparse tensor ops", format_si(*s)});
  if (auto i = number_arg(info, "integer tensor ops"))
    out.push_back({"integer tensor ops", format_si(*i) + " (not FLOPs)"});
  // An operator that declared its FLOPs keeps them; the counters' sums sit beside them.
  const std::optional<double> declared = number_arg(info, "flops");
  if (auto f = number_arg(info, trace::kArgCountedFlops)) {
    out.push_back({"counted FLOPs", format_si(*f) + difference(*f, declared.value_or(0))});
  }
  if (auto b = number_arg(info, trace::kArgCountedDramBytes))
    out.push_back({"counted DRAM bytes", format_si(*b) + "B"});
  return out;
}

}  // namespace flopline::viewer
