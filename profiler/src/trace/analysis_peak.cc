// "% of peak" support for the stats analysis: which device a slice ran on, what
// precision it used, and how long it would take at the roofline-attainable rate.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "analysis_internal.h"
#include "flopline/trace/analysis.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/trace_args.h"

namespace flopline::trace {

std::string normalize_precision(std::string_view precision) {
  std::string p;
  p.reserve(precision.size());
  for (char c : precision) {
    p.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c);
  }
  // Surrounding blanks are never part of a name.
  const auto first = p.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  p = p.substr(first, p.find_last_not_of(" \t") - first + 1);
  // PyTorch prints dtypes as "torch.float32".
  if (p.starts_with("torch.")) p.erase(0, 6);
  // Synonyms only: the same number format under another name. Anything that would
  // need an assumption (e.g. fp32 matmuls running as tf32) is left to the producer.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kSynonyms{{
      {"float64", "fp64"},
      {"double", "fp64"},
      {"f64", "fp64"},
      {"float32", "fp32"},
      {"float", "fp32"},
      {"f32", "fp32"},
      {"tensorfloat32", "tf32"},
      {"bfloat16", "bf16"},
      {"float16", "fp16"},
      {"half", "fp16"},
      {"f16", "fp16"},
      {"float8", "fp8"},
  }};
  for (const auto& [from, to] : kSynonyms) {
    if (p == from) return std::string(to);
  }
  // The FP8 encodings (float8_e4m3fn, fp8_e5m2, ...) share one peak.
  if (p.starts_with("float8_") || p.starts_with("fp8_") || p.starts_with("fp8e")) return "fp8";
  return p;
}

double host_link_bytes_per_s(const DeviceProperties& device) {
  // One direction of a x16 link: PCIe 3.0 8 GT/s, 4.0 16 GT/s, 5.0 32 GT/s per lane with
  // 128b/130b coding; NVLink-C2C 450 GB/s per direction (Grace Hopper, Grace Blackwell).
  constexpr double kPcieLaneBytes = 128.0 / 130.0 / 8.0 * 16;  // bytes per transfer, x16
  if (device.name.find("GH200") != std::string::npos ||
      device.name.find("GB200") != std::string::npos)
    return 450e9;
  switch (device.compute_major) {
    case 7:
      return 8e9 * kPcieLaneBytes;
    case 8:
      return 16e9 * kPcieLaneBytes;
    case 9:
      return 32e9 * kPcieLaneBytes;
    default:
      return 0;
  }
}

namespace detail {

std::vector<const DeviceProperties*> devices_by_track(const Trace& trace) {
  std::vector<const DeviceProperties*> by_process(trace.processes.size(), nullptr);
  const DeviceProperties* only = trace.devices.size() == 1 ? &trace.devices[0] : nullptr;
  for (std::size_t p = 0; p < trace.processes.size(); ++p) {
    const Process& proc = trace.processes[p];
    if (proc.is_gpu && proc.device >= 0) {
      // A GPU process names its device; a wrong guess would misstate % of peak, so
      // an id missing from the device table stays unknown.
      for (const DeviceProperties& d : trace.devices) {
        if (d.id == proc.device) {
          by_process[p] = &d;
          break;
        }
      }
    } else {
      by_process[p] = only;
    }
  }
  std::vector<const DeviceProperties*> by_track(trace.tracks.size(), nullptr);
  for (std::size_t t = 0; t < trace.tracks.size(); ++t) {
    const std::uint32_t p = trace.tracks[t].process;
    if (p < by_process.size()) by_track[t] = by_process[p];
  }
  return by_track;
}

std::string slice_precision(const Trace& trace, const Slice& s) {
  if (s.args == kNoArgs || s.args >= trace.args.size()) return {};
  const auto member = json_member(trace.args.json(s.args), kArgPrecision);
  if (!member) return {};
  const auto text = json_string(*member);
  return text ? normalize_precision(*text) : std::string();
}

double memory_roof(const Trace& trace, const Slice& s, const DeviceProperties& dev) {
  const std::string_view name = trace.str(s.name);
  const bool host_copy = category_matches(trace.str(s.cat), "gpu_memcpy") ||
                         category_matches(trace.str(s.cat), "memcpy");
  if (host_copy && (name.find("HtoD") != std::string_view::npos ||
                    name.find("DtoH") != std::string_view::npos)) {
    return host_link_bytes_per_s(dev);
  }
  return dev.peak_bytes_per_s;
}

}  // namespace detail
}  // namespace flopline::trace
