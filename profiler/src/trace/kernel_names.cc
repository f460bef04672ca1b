// Kernel base names; see kernel_names.h.
#include "flopline/trace/kernel_names.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <utility>

namespace flopline::trace {
namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// `s` without its top-level <...> groups; nullopt-like empty string when unbalanced.
bool strip_templates(std::string_view s, std::string& out) {
  int angle = 0, paren = 0;
  for (const char c : s) {
    if (c == '(') ++paren;
    if (c == ')') --paren;
    if (paren < 0) return false;
    if (paren == 0 && c == '<') {
      ++angle;
      continue;
    }
    if (paren == 0 && c == '>' && angle > 0) {
      --angle;
      continue;
    }
    if (angle == 0) out += c;
  }
  return angle == 0 && paren == 0;
}

}  // namespace

std::string kernel_function_name(std::string_view name) {
  std::string_view s = name;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  // Qualifiers after the parameter list ("... ) const").
  for (std::string_view q : {" const", " volatile"}) {
    if (s.ends_with(q)) s.remove_suffix(q.size());
  }
  if (s.empty() || s.back() != ')') return std::string(name);
  // The parameter list: the '(' that matches the last ')', right after a name.
  int depth = 0;
  std::size_t open = std::string_view::npos;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string_view::npos || open == 0) return std::string(name);
  const char before = s[open - 1];
  if (!ident_char(before) && before != '>') return std::string(name);
  std::string head;
  if (!strip_templates(s.substr(0, open), head)) return std::string(name);
  // The return type: whatever precedes the last space outside parentheses.
  int paren = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '(') ++paren;
    if (head[i] == ')') --paren;
    if (paren == 0 && head[i] == ' ') cut = i + 1;
  }
  const std::string_view qualified = std::string_view(head).substr(cut);
  return qualified.empty() ? std::string(name) : std::string(qualified);
}

std::string kernel_base_name(std::string_view name) {
  const std::string qualified = kernel_function_name(name);
  if (qualified == name) return qualified;  // not a C++ signature: unchanged
  // Namespaces and classes: what follows the last "::" outside parentheses.
  int paren = 0;
  std::size_t last = 0;
  for (std::size_t i = 0; i + 1 < qualified.size(); ++i) {
    if (qualified[i] == '(') ++paren;
    if (qualified[i] == ')') --paren;
    if (paren == 0 && qualified[i] == ':' && qualified[i + 1] == ':') last = i + 2;
  }
  const std::string_view base = std::string_view(qualified).substr(last);
  return base.empty() ? qualified : std::string(base);
}

void use_kernel_base_names(Trace& t) {
  const StringId kernel = t.strings.find("kernel");
  if (kernel == kNone) return;
  // Every kernel name of the trace, its function and its base name.
  std::unordered_map<StringId, std::pair<std::string, std::string>> names;
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.cat != kernel || names.count(s.name) > 0) continue;
        const std::string_view full = t.str(s.name);
        names.emplace(s.name, std::make_pair(kernel_function_name(full), kernel_base_name(full)));
      }
    }
  }
  // A base name two different functions share (foo in two namespaces) is not enough to
  // tell them apart: those kernels keep their functions' qualified names.
  std::unordered_map<std::string, std::string> function_of_base;
  std::unordered_map<std::string, bool> shared;
  for (const auto& [id, fb] : names) {
    const auto [it, fresh] = function_of_base.try_emplace(fb.second, fb.first);
    if (!fresh && it->second != fb.first) shared[fb.second] = true;
  }
  std::unordered_map<StringId, StringId> renamed;
  for (const auto& [id, fb] : names) {
    renamed[id] = t.strings.intern(shared.count(fb.second) > 0 ? fb.first : fb.second);
  }
  for (Track& track : t.tracks) {
    for (auto& row : track.rows) {
      for (Slice& s : row) {
        if (s.cat == kernel) s.name = renamed[s.name];
      }
    }
  }
}

bool use_kernel_mangled_names(Trace& t) {
  const auto member = std::find_if(t.extra_top_level.begin(), t.extra_top_level.end(),
                                   [](const auto& kv) { return kv.first == "mangledKernelNames"; });
  if (member == t.extra_top_level.end()) return false;
  const nlohmann::json names = nlohmann::json::parse(member->second, nullptr, false);
  if (!names.is_object()) return false;
  const StringId kernel = t.strings.find("kernel");
  if (kernel == kNone) return true;
  std::unordered_map<StringId, StringId> renamed;
  for (Track& track : t.tracks) {
    for (auto& row : track.rows) {
      for (Slice& s : row) {
        if (s.cat != kernel) continue;
        auto [it, fresh] = renamed.try_emplace(s.name, s.name);
        if (fresh) {
          const auto found = names.find(std::string(t.str(s.name)));
          if (found != names.end() && found->is_string())
            it->second = t.strings.intern(found->get<std::string>());
        }
        s.name = it->second;
      }
    }
  }
  return true;
}

}  // namespace flopline::trace
