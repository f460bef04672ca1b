// FLOP and byte counts of PyTorch operators from their input shapes; see torch_ops.h.
#include "flopline/trace/torch_ops.h"

#include <algorithm>
#include <array>

namespace flopline::trace {
namespace {

const Shape* shape_at(std::span<const std::optional<Shape>> inputs, std::size_t i) {
  return i < inputs.size() && inputs[i] ? &*inputs[i] : nullptr;
}

bool has_tensor(std::span<const std::optional<Shape>> inputs, std::size_t i) {
  const Shape* s = shape_at(inputs, i);
  return s != nullptr && !s->empty();
}

double product(const Shape& s, std::size_t from, std::size_t to) {
  double p = 1;
  for (std::size_t i = from; i < to; ++i) p *= static_cast<double>(s[i]);
  return p;
}

bool all_non_negative(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](std::int64_t d) { return d >= 0; });
}

// [M,K] x [K,N] -> {M, N, K}
std::optional<std::array<double, 3>> matmul_dims(const Shape* a, const Shape* b) {
  if (a == nullptr || b == nullptr || a->size() != 2 || b->size() != 2 || (*a)[1] != (*b)[0])
    return std::nullopt;
  if (!all_non_negative(*a) || !all_non_negative(*b)) return std::nullopt;
  return std::array<double, 3>{static_cast<double>((*a)[0]), static_cast<double>((*b)[1]),
                               static_cast<double>((*a)[1])};
}

// [B,M,K] x [B,K,N] -> {B, M, N, K}
std::optional<std::array<double, 4>> batched_dims(const Shape* a, const Shape* b) {
  if (a == nullptr || b == nullptr || a->size() != 3 || b->size() != 3) return std::nullopt;
  if ((*a)[0] != (*b)[0] || (*a)[2] != (*b)[1]) return std::nullopt;
  if (!all_non_negative(*a) || !all_non_negative(*b)) return std::nullopt;
  return std::array<double, 4>{static_cast<double>((*a)[0]), static_cast<double>((*a)[1]),
                               static_cast<double>((*b)[2]), static_cast<double>((*a)[2])};
}

bool linear_fits(const Shape* x, const Shape* w) {
  return x != nullptr && w != nullptr && !x->empty() && w->size() == 2 && x->back() == (*w)[1] &&
         all_non_negative(*x) && all_non_negative(*w);
}

// torch.matmul: the output shape, and M*N*K*batch as the multiply-add count.
struct MatmulShape {
  Shape out;
  double multiply_adds = 0;
};

std::optional<MatmulShape> matmul_shape(const Shape* a, const Shape* b) {
  if (a == nullptr || b == nullptr || a->empty() || b->empty()) return std::nullopt;
  if (!all_non_negative(*a) || !all_non_negative(*b)) return std::nullopt;
  const bool a_vec = a->size() == 1;
  const bool b_vec = b->size() == 1;
  const std::int64_t k = a->back();
  const std::int64_t k_b = b_vec ? (*b)[0] : (*b)[b->size() - 2];
  if (k != k_b) return std::nullopt;
  const std::int64_t m = a_vec ? 1 : (*a)[a->size() - 2];
  const std::int64_t n = b_vec ? 1 : b->back();
  // Leading (batch) dims broadcast against each other, aligned at the right.
  const std::size_t a_lead = a_vec ? 0 : a->size() - 2;
  const std::size_t b_lead = b_vec ? 0 : b->size() - 2;
  const std::size_t lead = std::max(a_lead, b_lead);
  MatmulShape r;
  double batch = 1;
  for (std::size_t i = 0; i < lead; ++i) {
    const std::int64_t da = i + a_lead >= lead ? (*a)[i + a_lead - lead] : 1;
    const std::int64_t db = i + b_lead >= lead ? (*b)[i + b_lead - lead] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    const std::int64_t d = da == 1 ? db : da;
    r.out.push_back(d);
    batch *= static_cast<double>(d);
  }
  if (!a_vec) r.out.push_back(m);
  if (!b_vec) r.out.push_back(n);
  r.multiply_adds =
      batch * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return r;
}

// q [..., L, E], k [..., S, E], v [..., S, Ev] -> {batch, L, S, E, Ev}
std::optional<std::array<double, 5>> attention_dims(const Shape* q, const Shape* k,
                                                    const Shape* v) {
  if (q == nullptr || k == nullptr || v == nullptr) return std::nullopt;
  if (q->size() < 2 || k->size() < 2 || v->size() < 2) return std::nullopt;
  if (!all_non_negative(*q) || !all_non_negative(*k) || !all_non_negative(*v)) return std::nullopt;
  const std::int64_t l = (*q)[q->size() - 2];
  const std::int64_t e = q->back();
  const std::int64_t s = (*k)[k->size() - 2];
  if (k->back() != e || (*v)[v->size() - 2] != s) return std::nullopt;
  return std::array<double, 5>{product(*q, 0, q->size() - 2), static_cast<double>(l),
                               static_cast<double>(s), static_cast<double>(e),
                               static_cast<double>(v->back())};
}

std::optional<double> conv_flops(std::string_view op, std::span<const std::optional<Shape>> inputs,
                                 const Shape* output) {
  const Shape* x = shape_at(inputs, 0);
  const Shape* w = shape_at(inputs, 1);
  if (x == nullptr || w == nullptr || output == nullptr || w->size() < 3) return std::nullopt;
  if (!all_non_negative(*x) || !all_non_negative(*w) || !all_non_negative(*output))
    return std::nullopt;
  const std::size_t spatial = w->size() - 2;
  const bool batched = x->size() == spatial + 2;
  if (!batched && x->size() != spatial + 1) return std::nullopt;
  if (output->size() != x->size()) return std::nullopt;
  const std::size_t channel = batched ? 1 : 0;
  const std::int64_t cin = (*x)[channel];
  const std::int64_t cin_per_group = (*w)[1];
  const std::int64_t cout = (*w)[0];
  if (cin_per_group <= 0 || cin % cin_per_group != 0 || (*output)[channel] != cout)
    return std::nullopt;
  const double n = batched ? static_cast<double>((*x)[0]) : 1.0;
  if (batched && (*output)[0] != (*x)[0]) return std::nullopt;
  const double out_points =
      n * static_cast<double>(cout) * product(*output, channel + 1, output->size());
  const double per_point = static_cast<double>(cin_per_group) * product(*w, 2, w->size());
  double flops = 2 * out_points * per_point;
  // cudnn_convolution takes no bias (PyTorch adds it with a separate add_).
  if (op != "aten::cudnn_convolution" && has_tensor(inputs, 2)) flops += out_points;
  return flops;
}

// One value per spatial dim from a list of one or `dims` values.
std::optional<std::int64_t> per_dim(std::span<const std::int64_t> v, std::size_t i,
                                    std::size_t dims) {
  if (v.size() == 1) return v[0];
  if (v.size() == dims) return v[i];
  return std::nullopt;
}

}  // namespace

bool is_torch_convolution(std::string_view op) {
  return op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d" ||
         op == "aten::convolution" || op == "aten::_convolution" || op == "aten::cudnn_convolution";
}

bool is_torch_attention(std::string_view op) {
  return op == "aten::scaled_dot_product_attention" ||
         op == "aten::_scaled_dot_product_flash_attention" ||
         op == "aten::_scaled_dot_product_efficient_attention" ||
         op == "aten::_scaled_dot_product_cudnn_attention";
}

bool has_torch_flop_formula(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::matmul" || op == "aten::linear" || is_torch_convolution(op) ||
         is_torch_attention(op);
}

std::optional<Shape> torch_op_output_shape(std::string_view op,
                                           std::span<const std::optional<Shape>> inputs) {
  if (op == "aten::mm" || op == "aten::addmm") {
    const std::size_t a = op == "aten::mm" ? 0 : 1;
    const Shape* x = shape_at(inputs, a);
    const Shape* y = shape_at(inputs, a + 1);
    if (!matmul_dims(x, y)) return std::nullopt;
    return Shape{(*x)[0], (*y)[1]};
  }
  if (op == "aten::bmm" || op == "aten::baddbmm") {
    const std::size_t a = op == "aten::bmm" ? 0 : 1;
    const Shape* x = shape_at(inputs, a);
    const Shape* y = shape_at(inputs, a + 1);
    if (!batched_dims(x, y)) return std::nullopt;
    return Shape{(*x)[0], (*x)[1], (*y)[2]};
  }
  if (op == "aten::matmul") {
    const auto m = matmul_shape(shape_at(inputs, 0), shape_at(inputs, 1));
    if (!m) return std::nullopt;
    return m->out;
  }
  if (op == "aten::linear") {
    const Shape* x = shape_at(inputs, 0);
    const Shape* w = shape_at(inputs, 1);
    if (!linear_fits(x, w)) return std::nullopt;
    Shape out = *x;
    out.back() = (*w)[0];
    return out;
  }
  if (is_torch_attention(op)) {
    const Shape* q = shape_at(inputs, 0);
    const Shape* v = shape_at(inputs, 2);
    if (!attention_dims(q, shape_at(inputs, 1), v)) return std::nullopt;
    Shape out = *q;
    out.back() = v->back();
    return out;
  }
  return std::nullopt;
}

std::optional<double> torch_op_flops(std::string_view op,
                                     std::span<const std::optional<Shape>> inputs,
                                     const Shape* output) {
  if (op == "aten::mm" || op == "aten::addmm") {
    const std::size_t a = op == "aten::mm" ? 0 : 1;
    const auto d = matmul_dims(shape_at(inputs, a), shape_at(inputs, a + 1));
    if (!d) return std::nullopt;
    const auto [m, n, k] = *d;
    return 2 * m * n * k + (op == "aten::addmm" ? m * n : 0);
  }
  if (op == "aten::bmm" || op == "aten::baddbmm") {
    const std::size_t a = op == "aten::bmm" ? 0 : 1;
    const auto d = batched_dims(shape_at(inputs, a), shape_at(inputs, a + 1));
    if (!d) return std::nullopt;
    const auto [b, m, n, k] = *d;
    return 2 * b * m * n * k + (op == "aten::baddbmm" ? b * m * n : 0);
  }
  if (op == "aten::matmul") {
    const auto m = matmul_shape(shape_at(inputs, 0), shape_at(inputs, 1));
    if (!m) return std::nullopt;
    return 2 * m->multiply_adds;
  }
  if (op == "aten::linear") {
    const Shape* x = shape_at(inputs, 0);
    const Shape* w = shape_at(inputs, 1);
    if (!linear_fits(x, w)) return std::nullopt;
    const double batch = product(*x, 0, x->size() - 1);
    const double in = static_cast<double>((*w)[1]);
    const double out = static_cast<double>((*w)[0]);
    return 2 * batch * in * out + (has_tensor(inputs, 2) ? batch * out : 0);
  }
  if (is_torch_convolution(op)) return conv_flops(op, inputs, output);
  if (is_torch_attention(op)) {
    const auto d = attention_dims(shape_at(inputs, 0), shape_at(inputs, 1), shape_at(inputs, 2));
    if (!d) return std::nullopt;
    const auto [batch, l, s, e, ev] = *d;
    return 2 * batch * l * s * e + 2 * batch * l * s * ev;
  }
  return std::nullopt;
}

std::optional<double> torch_op_bytes(std::span<const std::optional<Shape>> inputs,
                                     const Shape& output, std::int32_t element_bytes) {
  if (element_bytes <= 0) return std::nullopt;
  double elements = product(output, 0, output.size());
  for (const auto& s : inputs) {
    if (s && !s->empty()) elements += product(*s, 0, s->size());
  }
  return elements * element_bytes;
}

std::optional<Shape> conv_output_shape(const Shape& input, const Shape& weight,
                                       std::span<const std::int64_t> stride,
                                       std::span<const std::int64_t> padding,
                                       std::span<const std::int64_t> dilation,
                                       std::string_view padding_mode) {
  if (weight.size() < 3 || !all_non_negative(input) || !all_non_negative(weight))
    return std::nullopt;
  const std::size_t dims = weight.size() - 2;
  const bool batched = input.size() == dims + 2;
  if (!batched && input.size() != dims + 1) return std::nullopt;
  const std::size_t first = batched ? 2 : 1;
  Shape out;
  if (batched) out.push_back(input[0]);
  out.push_back(weight[0]);
  for (std::size_t i = 0; i < dims; ++i) {
    const std::int64_t in = input[first + i];
    if (padding_mode == "same") {
      out.push_back(in);
      continue;
    }
    const auto s = per_dim(stride, i, dims);
    const auto d = per_dim(dilation, i, dims);
    std::optional<std::int64_t> p = std::int64_t{0};
    if (padding_mode != "valid") p = per_dim(padding, i, dims);
    if (!s || !d || !p || *s <= 0 || *d <= 0 || *p < 0) return std::nullopt;
    const std::int64_t span = *d * (weight[2 + i] - 1) + 1;
    const std::int64_t room = in + 2 * *p - span;
    if (room < 0) return std::nullopt;
    out.push_back(room / *s + 1);
  }
  return out;
}

}  // namespace flopline::trace
