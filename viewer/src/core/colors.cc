// Stable colours from a hash of the name, and the legend.
#include "core/colors.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace flopline::viewer {
namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::uint32_t pack(float r, float g, float b) {
  auto c = [](float v) {
    return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
  };
  return 0xff000000u | (c(b) << 16) | (c(g) << 8) | c(r);
}

// HSL to RGB (h in [0, 1)).
std::uint32_t hsl(float h, float s, float l) {
  auto f = [&](float n) {
    const float k = std::fmod(n + h * 12.0f, 12.0f);
    const float a = s * std::min(l, 1.0f - l);
    return l - a * std::max(-1.0f, std::min({k - 3.0f, 9.0f - k, 1.0f}));
  };
  return pack(f(0), f(8), f(4));
}

float channel(std::uint32_t rgba, int shift) {
  return static_cast<float>((rgba >> shift) & 0xffu) / 255.0f;
}

std::uint32_t mix(std::uint32_t rgba, float target, float amount) {
  amount = std::clamp(amount, 0.0f, 1.0f);
  auto m = [&](int shift) {
    return channel(rgba, shift) + (target - channel(rgba, shift)) * amount;
  };
  return (rgba & 0xff000000u) | (pack(m(0), m(8), m(16)) & 0x00ffffffu);
}

}  // namespace

std::uint32_t color_for_key(std::string_view key) {
  const std::uint64_t h = fnv1a(key);
  const float hue = static_cast<float>(h & 0xffff) / 65536.0f;
  const float sat = 0.45f + 0.25f * static_cast<float>((h >> 16) & 0xff) / 255.0f;
  const float light = 0.55f + 0.15f * static_cast<float>((h >> 24) & 0xff) / 255.0f;
  return hsl(hue, sat, light);
}

std::uint32_t lighten(std::uint32_t rgba, float amount) {
  return mix(rgba, 1.0f, amount);
}
std::uint32_t darken(std::uint32_t rgba, float amount) {
  return mix(rgba, 0.0f, amount);
}

ColorTable ColorTable::build(const trace::Trace& trace) {
  ColorTable t;
  t.colors_.resize(trace.strings.size());
  for (std::size_t id = 0; id < t.colors_.size(); ++id) {
    t.colors_[id] = color_for_key(trace.strings.view(static_cast<trace::StringId>(id)));
  }
  return t;
}

std::vector<LegendEntry> build_legend(TraceList traces, ColorBy by, std::size_t max_entries) {
  std::unordered_map<std::string, LegendEntry> by_label;
  for (const trace::Trace* t : traces) {
    // Sum per string id first (no hashing per slice), then merge by text.
    std::vector<std::pair<std::int64_t, std::uint64_t>> per_id(t->strings.size(), {0, 0});
    for (const trace::Track& k : t->tracks) {
      for (const auto& row : k.rows) {
        for (const trace::Slice& s : row) {
          const trace::StringId id = by == ColorBy::kName ? s.name : s.cat;
          if (id >= per_id.size()) continue;
          per_id[id].first += s.dur;
          per_id[id].second += 1;
        }
      }
    }
    for (std::size_t id = 0; id < per_id.size(); ++id) {
      if (per_id[id].second == 0) continue;
      const std::string label(t->strings.view(static_cast<trace::StringId>(id)));
      LegendEntry& e = by_label[label];
      e.label = label;
      e.color = color_for_key(label);
      e.total_ns += per_id[id].first;
      e.count += per_id[id].second;
    }
  }
  std::vector<LegendEntry> all;
  all.reserve(by_label.size());
  for (auto& [label, e] : by_label) all.push_back(std::move(e));
  std::sort(all.begin(), all.end(), [](const LegendEntry& a, const LegendEntry& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.label < b.label;
  });
  if (max_entries > 0 && all.size() > max_entries) {
    LegendEntry other;
    other.label = "other";
    other.color = 0xff808080u;
    for (std::size_t i = max_entries - 1; i < all.size(); ++i) {
      other.total_ns += all[i].total_ns;
      other.count += all[i].count;
    }
    all.resize(max_entries - 1);
    all.push_back(std::move(other));
  }
  return all;
}

}  // namespace flopline::viewer
