#include "short_name.h"

#include "flopline/trace/name_text.h"

namespace flopline::viewer {
namespace {

bool opens(char c) {
  return c == '<' || c == '(' || c == '[' || c == '{';
}
bool closes(char c) {
  return c == '>' || c == ')' || c == ']' || c == '}';
}

// "operator<", "operator<<", "operator->" and "operator()" hold brackets that do not
// nest; they are left alone by treating the name as too irregular to shorten.
bool has_operator(std::string_view s) {
  return s.find("operator") != std::string_view::npos;
}

// Removes a parameter list "(...)" that ends the name (with a trailing " const").
std::string_view strip_parameters(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.ends_with(" const")) s.remove_suffix(6);
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (closes(s[i])) ++depth;
    if (opens(s[i]) && --depth == 0) {
      // "(anonymous namespace)" alone is not a parameter list.
      if (i == 0) return s;
      return s.substr(0, i);
    }
  }
  return s;
}

// Everything after the last space outside brackets: drops "void ", "at::Tensor ".
std::string_view strip_return_type(std::string_view s) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (opens(s[i])) ++depth;
    if (closes(s[i]) && depth > 0) --depth;
    if (s[i] == ' ' && depth == 0) start = i + 1;
  }
  return s.substr(start);
}

std::string collapse_templates(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  int depth = 0;
  for (char c : s) {
    if (c == '<') {
      if (depth++ == 0) out += "<...>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

void erase_all(std::string& s, std::string_view what) {
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what)) s.erase(p, what.size());
}

// The last "::"-separated component outside brackets.
std::string last_component(const std::string& s) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (opens(s[i])) ++depth;
    if (closes(s[i]) && depth > 0) --depth;
    if (depth == 0 && s[i] == ':' && s[i + 1] == ':') start = i + 2;
  }
  return s.substr(start);
}

}  // namespace

std::string short_kernel_name(std::string_view name, std::size_t max_qualified) {
  // Only C++ signatures are rewritten: "Memcpy HtoD (Device -> Pageable)" or
  // "autograd::engine::evaluate_function: AddmmBackward0" are names, not signatures.
  std::string_view trimmed = name;
  while (!trimmed.empty() && trimmed.back() == ' ') trimmed.remove_suffix(1);
  const bool templated = name.find('<') != std::string_view::npos;
  const bool signature = trimmed.ends_with(')') && name.find("::") != std::string_view::npos;
  if ((!templated && !signature) || has_operator(name)) return std::string(name);
  std::string s = collapse_templates(strip_return_type(strip_parameters(name)));
  erase_all(s, "(anonymous namespace)::");
  if (s.size() > max_qualified) s = last_component(s);
  if (s.empty()) return std::string(name);
  return s;
}

std::vector<std::string> distinct_short_kernel_names(std::span<const std::string_view> names,
                                                     std::size_t max_qualified) {
  std::vector<std::string> shown;
  shown.reserve(names.size());
  for (std::string_view n : names) shown.push_back(short_kernel_name(n, max_qualified));
  trace::disambiguate_names(names, shown);
  return shown;
}

std::vector<std::string> table_row_names(std::span<const std::string> names, bool kernels) {
  if (!kernels) return {names.begin(), names.end()};
  std::vector<std::string_view> views(names.begin(), names.end());
  return distinct_short_kernel_names(views);
}

}  // namespace flopline::viewer
