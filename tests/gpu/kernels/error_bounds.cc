#include "error_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace flopline::kernels::testing {
namespace {

// One ulp of the output type, relative, and the absolute floor below which a value may
// be flushed to zero or lost to subnormal spacing.
double ulp_relative(DType out) {
  switch (out) {
    case DType::bf16:
      return std::ldexp(1.0, -8);
    case DType::f16:
      return std::ldexp(1.0, -10);
    default:
      return std::ldexp(1.0, -24);
  }
}
double absolute_floor(DType out) {
  return out == DType::f16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -120);
}

std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float float_of(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

}  // namespace

MatmulReference reference_matmul_host(const std::vector<double>& a, const std::vector<double>& b,
                                      std::int64_t m, std::int64_t n, std::int64_t k) {
  MatmulReference r;
  r.c.assign(static_cast<std::size_t>(m * n), 0.0);
  r.magnitude.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t l = 0; l < k; ++l) {
      const double x = a[static_cast<std::size_t>(i * k + l)];
      for (std::int64_t j = 0; j < n; ++j) {
        const double y = b[static_cast<std::size_t>(l * n + j)];
        r.c[static_cast<std::size_t>(i * n + j)] += x * y;
        r.magnitude[static_cast<std::size_t>(i * n + j)] += std::fabs(x * y);
      }
    }
  }
  return r;
}

std::vector<double> reference_softmax(const std::vector<double>& s, std::int64_t m, std::int64_t n,
                                      bool rows) {
  std::vector<double> out(s.size());
  const std::int64_t lines = rows ? m : n, len = rows ? n : m;
  for (std::int64_t l = 0; l < lines; ++l) {
    auto at = [&](std::int64_t i) -> std::size_t {
      return static_cast<std::size_t>(rows ? l * n + i : i * n + l);
    };
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < len; ++i) mx = std::max(mx, s[at(i)]);
    double sum = 0;
    for (std::int64_t i = 0; i < len; ++i) sum += std::exp(s[at(i)] - mx);
    for (std::int64_t i = 0; i < len; ++i) out[at(i)] = std::exp(s[at(i)] - mx) / sum;
  }
  return out;
}

std::vector<double> matmul_bounds(const MatmulReference& ref, std::int64_t k, DType out,
                                  bool inputs_exact) {
  const double u_out = ulp_relative(out), floor = absolute_floor(out);
  const double u_in = inputs_exact ? 0.0 : std::ldexp(1.0, -9);
  const double u_acc = 1.5 * static_cast<double>(k) * std::ldexp(1.0, -23);
  std::vector<double> bound(ref.c.size());
  for (std::size_t i = 0; i < bound.size(); ++i) {
    bound[i] = u_out * std::fabs(ref.c[i]) + (u_in + u_acc) * ref.magnitude[i] + floor;
  }
  return bound;
}

std::vector<double> softmax_bounds(const std::vector<double>& p_ref,
                                   const std::vector<double>& scores,
                                   const std::vector<double>& score_bounds, std::int64_t m,
                                   std::int64_t n, bool rows, DType out, int output_roundings) {
  std::vector<double> bound(p_ref.size());
  const double u_out = output_roundings * ulp_relative(out), floor = absolute_floor(out);
  const std::int64_t lines = rows ? m : n, len = rows ? n : m;
  for (std::int64_t l = 0; l < lines; ++l) {
    auto at = [&](std::int64_t i) -> std::size_t {
      return static_cast<std::size_t>(rows ? l * n + i : i * n + l);
    };
    double worst = 0, largest = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      worst = std::max(worst, score_bounds[at(i)]);
      largest = std::max(largest, std::fabs(scores[at(i)]));
    }
    const double line = std::expm1(2 * worst) +
                        static_cast<double>(len + 16) * std::ldexp(1.0, -24) + std::ldexp(1.0, -21);
    for (std::int64_t i = 0; i < len; ++i) {
      const std::size_t e = at(i);
      const double argument = (std::fabs(scores[e]) + largest) * std::ldexp(1.0, -22);
      bound[e] = p_ref[e] * (line + argument + u_out) + floor;
    }
  }
  return bound;
}

BoundReport check_bounds(const std::vector<double>& got, const std::vector<double>& ref,
                         const std::vector<double>& bound, std::int64_t n) {
  BoundReport r;
  std::ostringstream first;
  first.precision(9);
  double worst_ratio = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double error = std::fabs(got[i] - ref[i]);
    if (error <= bound[i]) continue;  // false for NaN
    if (r.outside < 3) {
      first << " (" << static_cast<std::int64_t>(i) / n << ", " << static_cast<std::int64_t>(i) % n
            << ") = " << got[i] << " want " << ref[i] << " +- " << bound[i] << ";";
    }
    ++r.outside;
    const double ratio =
        std::isnan(error) ? std::numeric_limits<double>::infinity() : error / bound[i];
    if (ratio > worst_ratio || r.outside == 1) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (r.outside > 0) {
    std::ostringstream s;
    s.precision(9);
    s << r.outside << " of " << got.size() << " elements outside their error bounds;" << first.str()
      << " worst (" << static_cast<std::int64_t>(worst) / n << ", "
      << static_cast<std::int64_t>(worst) % n << "): " << got[worst] << " want " << ref[worst]
      << ", " << worst_ratio << " times its bound " << bound[worst];
    r.detail = s.str();
  }
  return r;
}

std::string check_line_sums(const std::vector<double>& got, const std::vector<double>& bound,
                            std::int64_t m, std::int64_t n, bool rows) {
  const std::int64_t lines = rows ? m : n, len = rows ? n : m;
  for (std::int64_t l = 0; l < lines; ++l) {
    double sum = 0, slack = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      const std::size_t e = static_cast<std::size_t>(rows ? l * n + i : i * n + l);
      sum += got[e];
      slack += bound[e];
    }
    if (!(std::fabs(sum - 1.0) <= slack + 1e-12)) {
      std::ostringstream s;
      s.precision(9);
      s << (rows ? "row " : "column ") << l << " sums to " << sum << " (allowed 1 +- " << slack
        << ")";
      return s.str();
    }
  }
  return "";
}

float round_to_bf16(float x) {
  std::uint32_t u = bits_of(x);
  if (std::isnan(x)) return x;
  u += 0x7FFFu + ((u >> 16) & 1u);  // to nearest, ties to even
  return float_of(u & 0xFFFF0000u);
}

float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  return float_of((bits_of(x) + 0x1000u) & 0xFFFFE000u);  // to nearest, ties away from zero
}

}  // namespace flopline::kernels::testing
