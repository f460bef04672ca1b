// Roofline: operators placed by arithmetic intensity (FLOPs per byte) and achieved
// TFLOP/s under the device's ceilings (compute peak per precision, memory bandwidth)
// from the trace's deviceProperties. Plus log-log mapping to a plot rectangle and a
// hover pick. Only rows with both FLOPs and bytes become points.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op_table.h"

namespace flopline::viewer {

struct RooflinePoint {
  std::string name;
  double intensity = 0;  // FLOPs per byte
  double tflops = 0;     // achieved TFLOP/s (the table's)
  trace::TimeNs total_ns = 0;
  std::string precision;
  std::size_t table_row = 0;  // index into OpTable::rows()
};

struct ComputeCeiling {
  std::string precision;  // "fp32", "tf32", "bf16"...
  double tflops = 0;      // peak, TFLOP/s
};

struct Roofline {
  std::vector<RooflinePoint> points;
  std::vector<ComputeCeiling> compute;  // sorted by peak, ascending
  double bandwidth_gbps = 0;            // memory ceiling, GB/s (1e9 bytes/s); 0 unknown
  std::string device;                   // the device whose peaks these are
  std::size_t rows_without_bytes = 0;   // table rows with FLOPs but no bytes (not placed)

  bool has_ceilings() const { return !compute.empty() || bandwidth_gbps > 0; }
  // min(peak, intensity x bandwidth) in TFLOP/s; the compute peak alone when the
  // bandwidth is unknown.
  double attainable_tflops(double intensity, double peak_tflops) const;
  // Intensity where the bandwidth slope meets `peak_tflops` (FLOPs/byte); 0 if unknown.
  double ridge_intensity(double peak_tflops) const;
};

// Points from the table's rows; ceilings from the first device (over all traces) that
// carries peaks.
Roofline build_roofline(TraceList traces, const OpTable& table);

// Log-log axes onto a rectangle (y grows downwards, as on screen).
struct LogLogMap {
  double x_min = 1e-2, x_max = 1e4;  // FLOPs/byte
  double y_min = 1e-3, y_max = 1e3;  // TFLOP/s
  float left_px = 0, top_px = 0, width_px = 100, height_px = 100;

  float x_of(double intensity) const;
  float y_of(double tflops) const;
  double intensity_at(float x) const;
  double tflops_at(float y) const;
  // Bounds fitted to the data: every point, compute ceiling and ridge, with a margin of
  // a factor kFitMargin on each side and at least one decade on each axis.
  static constexpr double kFitMargin = 1.5;
  static LogLogMap fit(const Roofline& r, float left, float top, float width, float height);
};

// Tick values for a log axis over [lo, hi]: the decades in it, or 1-2-5 steps when fewer
// than two decades fall inside (a fitted axis often spans less than two).
std::vector<double> log_ticks(double lo, double hi);

// The label of each distinct compute ceiling, placed so that none overlaps another:
// ceilings with the same peak share one label ("bf16, fp16 989 TFLOP/s"), and a label
// closer than `line_px` to the one above it moves down. `y` is the label's top, px.
struct CeilingLabel {
  std::string text;
  double tflops = 0;
  float line_y = 0;  // the ceiling's y
  float y = 0;       // where its label goes
};
std::vector<CeilingLabel> ceiling_labels(const Roofline& r, const LogLogMap& map, float line_px);

// The points the legend lists, most time first, at most `max` (indices into points).
std::vector<std::size_t> legend_points(const Roofline& r, std::size_t max);

// A legend entry: the point's number and its name, a kernel's by its base name (no
// return type, namespaces, template arguments or parameters: trace/kernel_names.h), so
// that a dozen PyTorch kernels do not all read "void at::native::(anonymous nam...";
// cut to `max_chars` with "...". The full name is in the point's tooltip.
std::string legend_label(const RooflinePoint& p, std::size_t number, std::size_t max_chars = 34);

// The point nearest (x, y) within radius_px, or nullopt.
std::optional<std::size_t> pick_point(const Roofline& r, const LogLogMap& map, float x, float y,
                                      float radius_px = 6.0f);

}  // namespace flopline::viewer
