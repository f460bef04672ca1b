// Viewport maths. Zooming works in double and rounds once, so repeated zooms around a
// cursor keep the time under it fixed to within a nanosecond.
#include "core/viewport.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace flopline::viewer {
namespace {

constexpr auto kLimit = static_cast<double>(Viewport::kTimeLimitNs);

// The largest span the clamps allow for an extent.
std::int64_t max_span(const Viewport& v) {
  const double extent =
      std::max(static_cast<double>(v.extent_end_ns) - static_cast<double>(v.extent_begin_ns), 1.0);
  const double most = std::max(extent * Viewport::kMaxExtentFactor, 1000.0);
  return static_cast<std::int64_t>(std::min(most, static_cast<double>(Viewport::kMaxSpanNs)));
}

// Rounded, and kept within +-kTimeLimitNs.
std::int64_t round_to_i64(double v) {
  if (!(v > -kLimit)) return -Viewport::kTimeLimitNs;
  if (!(v < kLimit)) return Viewport::kTimeLimitNs;
  return static_cast<std::int64_t>(std::llround(v));
}

// Viewport::fit in integers, exact to the ns (epoch-based times are past what a double
// holds to the ns); false, changing nothing, when the view cannot hold [begin, end).
bool fit_exactly(Viewport& v, std::int64_t begin_ns, std::int64_t end_ns) {
  constexpr std::int64_t kLim = Viewport::kTimeLimitNs;
  if (begin_ns < -kLim || end_ns > kLim) return false;
  const std::int64_t margin =
      std::llround(static_cast<double>(end_ns - begin_ns) * Viewport::kFitMargin);
  const std::int64_t lo = begin_ns - margin, hi = end_ns + margin;
  if (hi - lo > Viewport::kMaxSpanNs || lo < -kLim || hi > kLim) return false;
  v.t0_ns = lo;
  v.t1_ns = hi;
  return true;
}

}  // namespace

double Viewport::ns_per_px() const {
  return static_cast<double>(span_ns()) / static_cast<double>(std::max(width_px, 1.0f));
}

double Viewport::px_per_ns() const {
  return static_cast<double>(std::max(width_px, 1.0f)) /
         static_cast<double>(std::max<std::int64_t>(span_ns(), 1));
}

double Viewport::time_to_x(std::int64_t t_ns) const {
  return static_cast<double>(x0_px) + static_cast<double>(t_ns - t0_ns) * px_per_ns();
}

std::int64_t Viewport::px_to_ns_at_least_1(double px) const {
  return std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(std::max(px, 0.0) / std::max(px_per_ns(), 1e-300))));
}

float Viewport::clamped_x(std::int64_t t_ns) const {
  const double lo = static_cast<double>(x0_px) - 2.0;
  const double hi = static_cast<double>(x0_px) + static_cast<double>(width_px) + 2.0;
  return static_cast<float>(std::clamp(time_to_x(t_ns), lo, hi));
}

std::int64_t Viewport::x_to_time(double x_px) const {
  return t0_ns + round_to_i64((x_px - static_cast<double>(x0_px)) * ns_per_px());
}

bool Viewport::set_extent(std::int64_t begin_ns, std::int64_t end_ns) {
  const std::int64_t lo = std::min(begin_ns, end_ns);
  const std::int64_t hi = std::max(begin_ns, end_ns);
  extent_begin_ns = std::clamp(lo, -kTimeLimitNs, kTimeLimitNs);
  extent_end_ns = std::clamp(hi, -kTimeLimitNs, kTimeLimitNs);
  return extent_begin_ns == lo && extent_end_ns == hi;
}

void Viewport::zoom_around(double factor, float cursor_x) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  const double cx = std::clamp(static_cast<double>(cursor_x), static_cast<double>(x0_px),
                               static_cast<double>(x0_px + std::max(width_px, 1.0f)));
  const double frac = (cx - x0_px) / static_cast<double>(std::max(width_px, 1.0f));
  const double t_cursor = static_cast<double>(t0_ns) + frac * static_cast<double>(span_ns());
  const double span =
      std::clamp(static_cast<double>(span_ns()) / factor, static_cast<double>(kMinSpanNs),
                 static_cast<double>(max_span(*this)));
  std::int64_t new_span = round_to_i64(span);
  // Rounding must not stall a zoom step at small spans.
  if (factor > 1 && new_span >= span_ns() && span_ns() > kMinSpanNs) new_span = span_ns() - 1;
  if (factor < 1 && new_span <= span_ns() && span_ns() < max_span(*this)) new_span = span_ns() + 1;
  new_span = std::clamp(new_span, kMinSpanNs, max_span(*this));
  t0_ns = round_to_i64(t_cursor - frac * static_cast<double>(new_span));
  t1_ns = t0_ns + new_span;
  clamp();
}

void Viewport::pan_pixels(float dx) {
  pan_ns(-round_to_i64(static_cast<double>(dx) * ns_per_px()));
}

void Viewport::pan_ns(std::int64_t dt_ns) {
  const std::int64_t span = span_ns();
  const double t0 = static_cast<double>(t0_ns) + static_cast<double>(dt_ns);
  t0_ns = std::min(round_to_i64(t0), kTimeLimitNs - span);  // the view keeps its span
  t1_ns = t0_ns + span;
  clamp();
}

bool Viewport::fit(std::int64_t begin_ns, std::int64_t end_ns) {
  if (end_ns < begin_ns) std::swap(begin_ns, end_ns);
  bool whole = true;
  if (!fit_exactly(*this, begin_ns, end_ns)) {
    // In double: the difference of two int64 times may not fit in int64.
    const double b = static_cast<double>(begin_ns), e = static_cast<double>(end_ns);
    const double margin = (e - b) * kFitMargin;
    double lo = b - margin, hi = e + margin;
    if (hi - lo > static_cast<double>(kMaxSpanNs)) {
      hi = lo + static_cast<double>(kMaxSpanNs);
      whole = false;
    }
    if (lo < -kLimit) {  // as near to `begin` as the view can go
      hi += -kLimit - lo;
      lo = -kLimit;
      whole = whole && b >= lo;
    }
    if (hi > kLimit) {
      lo -= hi - kLimit;
      hi = kLimit;
      whole = whole && e <= hi;
    }
    t0_ns = round_to_i64(lo);
    t1_ns = round_to_i64(hi);
  }
  if (t1_ns - t0_ns < kMinSpanNs) {
    // A zero-length selection: centre a small window on it.
    const std::int64_t mid = std::clamp(begin_ns, -kTimeLimitNs + 500, kTimeLimitNs - 500);
    t0_ns = mid - 500;
    t1_ns = mid + 500;
  }
  clamp();
  return whole;
}

void Viewport::clamp() {
  if (width_px < 1.0f) width_px = 1.0f;
  // Callers may set t0/t1 directly: within the limits no difference below overflows.
  t0_ns = std::clamp(t0_ns, -kTimeLimitNs, kTimeLimitNs);
  t1_ns = std::clamp(t1_ns, t0_ns, kTimeLimitNs);
  std::int64_t span = std::clamp(span_ns(), kMinSpanNs, max_span(*this));
  if (span != span_ns()) {
    const std::int64_t mid = t0_ns + (t1_ns - t0_ns) / 2;
    t0_ns = mid - span / 2;
    t1_ns = t0_ns + span;
  }
  // Keep some of the extent in view: the view may not start after the extent's end,
  // nor end before its beginning.
  if (t0_ns > extent_end_ns) {
    t0_ns = extent_end_ns;
    t1_ns = t0_ns + span;
  }
  if (t1_ns < extent_begin_ns) {
    t1_ns = extent_begin_ns;
    t0_ns = t1_ns - span;
  }
}

namespace {

struct Unit {
  const char* name;
  std::int64_t ns;
};
constexpr std::array<Unit, 4> kUnits{{{"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}}};

// The unit of the labels: the largest in which the step is at least 0.1 (so "1.2 ms"
// but not "0.05 us"), and the decimals multiples of the step need there (at most 1
// for 1-2-5 steps).
Unit unit_for_step(std::int64_t step, int& decimals) {
  for (const Unit& u : kUnits) {
    if (step * 10 < u.ns) continue;
    std::int64_t scaled = step;
    for (decimals = 0; decimals < 2 && scaled % u.ns != 0; ++decimals) scaled *= 10;
    return u;
  }
  decimals = 0;
  return kUnits.back();
}

std::string format_in_unit(std::int64_t rel_ns, const Unit& u, int decimals) {
  char buf[64];
  const double v = static_cast<double>(rel_ns) / static_cast<double>(u.ns);
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, u.name);
  return buf;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

RulerTicks ruler_ticks(const Viewport& vp, std::int64_t origin_ns, float min_major_spacing_px) {
  RulerTicks out;
  const double ns_per_px = vp.ns_per_px();
  const double want = std::max(1.0, static_cast<double>(min_major_spacing_px) * ns_per_px);
  // Smallest 1-2-5 x 10^k step >= want.
  std::int64_t step = 1;
  int mult = 1;
  for (std::int64_t p10 = 1; p10 <= 1000000000000000000LL; p10 *= 10) {
    bool found = false;
    for (int m : {1, 2, 5}) {
      if (static_cast<double>(p10) * m >= want) {
        step = p10 * m;
        mult = m;
        found = true;
        break;
      }
    }
    if (found) break;
    if (p10 > 1000000000000000000LL / 10) {
      step = p10;
      break;
    }
  }
  const std::int64_t minor = step >= 5 ? step / (mult == 2 ? 4 : 5) : step;
  out.major_step_ns = step;
  out.minor_step_ns = std::max<std::int64_t>(minor, 1);
  int decimals = 0;
  const Unit u = unit_for_step(step, decimals);
  out.unit = u.name;
  // Ticks at origin + k * minor covering [t0, t1].
  const std::int64_t first = floor_div(vp.t0_ns - origin_ns, out.minor_step_ns);
  const std::int64_t last = floor_div(vp.t1_ns - origin_ns, out.minor_step_ns) + 1;
  for (std::int64_t k = first; k <= last && out.ticks.size() < 10000; ++k) {
    const std::int64_t rel = k * out.minor_step_ns;
    const std::int64_t t = origin_ns + rel;
    if (t < vp.t0_ns || t > vp.t1_ns) continue;
    RulerTick tick;
    tick.t_ns = t;
    tick.x_px = vp.time_to_x(t);
    tick.major = rel % step == 0;
    if (tick.major) tick.label = format_in_unit(rel, u, decimals);
    out.ticks.push_back(std::move(tick));
  }
  return out;
}

std::string format_duration(std::int64_t ns) {
  const std::int64_t a = ns < 0 ? -ns : ns;
  const Unit* u = &kUnits.back();
  for (const Unit& c : kUnits) {
    if (a >= c.ns) {
      u = &c;
      break;
    }
  }
  char buf[64];
  if (u->ns == 1) {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
    return buf;
  }
  const double v = static_cast<double>(ns) / static_cast<double>(u->ns);
  const double av = std::fabs(v);
  const int decimals = av >= 100 ? 0 : (av >= 10 ? 1 : 2);
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, u->name);
  return buf;
}

}  // namespace flopline::viewer
