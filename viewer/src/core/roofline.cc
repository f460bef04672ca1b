// Roofline points and ceilings, and the log-log mapping of the plot.
#include "core/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "flopline/trace/kernel_names.h"

namespace flopline::viewer {

double Roofline::attainable_tflops(double intensity, double peak_tflops) const {
  if (bandwidth_gbps <= 0) return peak_tflops;
  // GB/s x FLOPs/byte = GFLOP/s; / 1e3 = TFLOP/s.
  return std::min(peak_tflops, intensity * bandwidth_gbps / 1e3);
}

double Roofline::ridge_intensity(double peak_tflops) const {
  if (bandwidth_gbps <= 0 || peak_tflops <= 0) return 0;
  return peak_tflops * 1e3 / bandwidth_gbps;
}

Roofline build_roofline(TraceList traces, const OpTable& table) {
  Roofline r;
  for (const trace::Trace* t : traces) {
    for (const trace::DeviceProperties& d : t->devices) {
      bool any = d.peak_bytes_per_s > 0;
      for (const auto& [precision, peak] : d.peak_flops) any = any || peak > 0;
      if (!any) continue;
      r.device = d.name;
      r.bandwidth_gbps = d.peak_bytes_per_s / 1e9;
      for (const auto& [precision, peak] : d.peak_flops) {
        if (peak > 0) r.compute.push_back(ComputeCeiling{precision, peak / 1e12});
      }
      break;
    }
    if (!r.device.empty() || r.has_ceilings()) break;
  }
  std::sort(r.compute.begin(), r.compute.end(),
            [](const ComputeCeiling& a, const ComputeCeiling& b) { return a.tflops < b.tflops; });
  for (std::size_t i = 0; i < table.rows().size(); ++i) {
    const OpRow& row = table.rows()[i];
    const trace::StatsRow& s = row.stats;
    if (!s.flops || !s.tflops || *s.flops <= 0 || *s.tflops <= 0) continue;
    if (!s.bytes || *s.bytes <= 0) {
      ++r.rows_without_bytes;
      continue;
    }
    RooflinePoint p;
    p.name = s.name;
    p.intensity = *s.flops / *s.bytes;
    p.tflops = *s.tflops;
    p.total_ns = s.total_ns;
    p.precision = row.precision;
    p.table_row = i;
    r.points.push_back(std::move(p));
  }
  return r;
}

namespace {

double safe_log10(double v) {
  return std::log10(std::max(v, 1e-300));
}

}  // namespace

float LogLogMap::x_of(double intensity) const {
  const double f =
      (safe_log10(intensity) - safe_log10(x_min)) / (safe_log10(x_max) - safe_log10(x_min));
  return left_px + static_cast<float>(f) * width_px;
}

float LogLogMap::y_of(double tflops) const {
  const double f =
      (safe_log10(tflops) - safe_log10(y_min)) / (safe_log10(y_max) - safe_log10(y_min));
  return top_px + height_px - static_cast<float>(f) * height_px;
}

double LogLogMap::intensity_at(float x) const {
  const double f = static_cast<double>(x - left_px) / static_cast<double>(width_px);
  return std::pow(10.0, safe_log10(x_min) + f * (safe_log10(x_max) - safe_log10(x_min)));
}

double LogLogMap::tflops_at(float y) const {
  const double f = static_cast<double>(top_px + height_px - y) / static_cast<double>(height_px);
  return std::pow(10.0, safe_log10(y_min) + f * (safe_log10(y_max) - safe_log10(y_min)));
}

LogLogMap LogLogMap::fit(const Roofline& r, float left, float top, float width, float height) {
  LogLogMap m;
  m.left_px = left;
  m.top_px = top;
  m.width_px = std::max(width, 1.0f);
  m.height_px = std::max(height, 1.0f);
  double xlo = std::numeric_limits<double>::max(), xhi = 0;
  double ylo = std::numeric_limits<double>::max(), yhi = 0;
  auto take_x = [&](double v) {
    if (v > 0 && std::isfinite(v)) {
      xlo = std::min(xlo, v);
      xhi = std::max(xhi, v);
    }
  };
  auto take_y = [&](double v) {
    if (v > 0 && std::isfinite(v)) {
      ylo = std::min(ylo, v);
      yhi = std::max(yhi, v);
    }
  };
  for (const RooflinePoint& p : r.points) {
    take_x(p.intensity);
    take_y(p.tflops);
  }
  for (const ComputeCeiling& c : r.compute) {
    take_y(c.tflops);
    take_x(r.ridge_intensity(c.tflops));
  }
  if (xhi == 0) {
    xlo = 0.1;
    xhi = 100;
  }
  if (yhi == 0) {
    ylo = 0.01;
    yhi = 100;
  }
  // A margin so points are not on the border, and at least a decade per axis.
  auto widen = [](double& lo, double& hi) {
    lo /= kFitMargin;
    hi *= kFitMargin;
    const double span = std::log10(hi) - std::log10(lo);
    if (span < 1) {
      const double pad = std::pow(10.0, (1 - span) / 2);
      lo /= pad;
      hi *= pad;
    }
  };
  widen(xlo, xhi);
  widen(ylo, yhi);
  m.x_min = xlo;
  m.x_max = xhi;
  m.y_min = ylo;
  m.y_max = yhi;
  return m;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  const double eps = 1e-9;
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  for (int e = first; e <= last; ++e) {
    const double v = std::pow(10.0, e);
    if (v >= lo * (1 - eps) && v <= hi * (1 + eps)) out.push_back(v);
  }
  if (out.size() >= 2) return out;
  out.clear();
  for (int e = first; e <= last; ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - eps) && v <= hi * (1 + eps)) out.push_back(v);
    }
  }
  return out;
}

std::vector<CeilingLabel> ceiling_labels(const Roofline& r, const LogLogMap& map, float line_px) {
  std::vector<CeilingLabel> out;
  // Highest first: labels sit above their lines and move down when crowded.
  std::vector<ComputeCeiling> c = r.compute;
  std::sort(c.begin(), c.end(),
            [](const ComputeCeiling& a, const ComputeCeiling& b) { return a.tflops > b.tflops; });
  for (std::size_t i = 0; i < c.size();) {
    std::size_t j = i;
    std::string names;
    while (j < c.size() && std::fabs(c[j].tflops - c[i].tflops) <= 0.005 * c[i].tflops) {
      names += (j > i ? ", " : "") + c[j].precision;
      ++j;
    }
    char value[64];
    std::snprintf(value, sizeof value, " %.0f TFLOP/s", c[i].tflops);
    CeilingLabel l;
    l.text = names + value;
    l.tflops = c[i].tflops;
    l.line_y = map.y_of(c[i].tflops);
    l.y = l.line_y - line_px;
    if (!out.empty()) l.y = std::max(l.y, out.back().y + line_px);
    out.push_back(std::move(l));
    i = j;
  }
  return out;
}

std::vector<std::size_t> legend_points(const Roofline& r, std::size_t max) {
  std::vector<std::size_t> idx(r.points.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return r.points[a].total_ns > r.points[b].total_ns;
  });
  if (idx.size() > max) idx.resize(max);
  return idx;
}

std::string legend_label(const RooflinePoint& p, std::size_t number, std::size_t max_chars) {
  std::string name = trace::kernel_base_name(p.name);
  if (name.size() > max_chars && max_chars > 3) name = name.substr(0, max_chars - 3) + "...";
  return std::to_string(number) + "  " + name;
}

std::optional<std::size_t> pick_point(const Roofline& r, const LogLogMap& map, float x, float y,
                                      float radius_px) {
  std::optional<std::size_t> best;
  float best_d2 = radius_px * radius_px;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const float dx = map.x_of(r.points[i].intensity) - x;
    const float dy = map.y_of(r.points[i].tflops) - y;
    const float d2 = dx * dx + dy * dy;
    if (d2 <= best_d2) {
      best_d2 = d2;
      best = i;
    }
  }
  return best;
}

}  // namespace flopline::viewer
