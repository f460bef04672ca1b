#include "flopline/capture/self_timing.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace flopline::capture {
namespace {

// One cache line per part: parts run on different threads.
struct alignas(64) PartCounters {
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> ns{0};
  std::atomic<std::uint64_t> max_ns{0};
};

std::atomic<bool> g_on{false};
PartCounters g_parts[kSelfParts];

// "1,234,567": counts are read by people.
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// In ns, us, ms or s: the largest unit the value reaches.
std::string duration(double ns) {
  char buf[32];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  }
  return buf;
}

}  // namespace

const char* to_string(SelfPart p) {
  switch (p) {
    case SelfPart::kCallback:
      return "callbacks";
    case SelfPart::kBufferRequest:
      return "buffer requests";
    case SelfPart::kBufferComplete:
      return "buffer completions";
    case SelfPart::kDecode:
      return "decoding";
    case SelfPart::kAppend:
      return "appends to the file";
    case SelfPart::kCounterLaunch:
      return "counters at launches not measured (within callbacks)";
    case SelfPart::kCounterMeasured:
      return "counters at measured launches, not their replay (within callbacks)";
    case SelfPart::kCount:
      break;
  }
  return "?";
}

void set_self_timing(bool on) {
  g_on.store(on, std::memory_order_relaxed);
}

bool self_timing_on() {
  return g_on.load(std::memory_order_relaxed);
}

void add_self_time(SelfPart part, std::uint64_t ns) {
  PartCounters& c = g_parts[static_cast<int>(part)];
  c.count.fetch_add(1, std::memory_order_relaxed);
  c.ns.fetch_add(ns, std::memory_order_relaxed);
  std::uint64_t seen = c.max_ns.load(std::memory_order_relaxed);
  while (ns > seen && !c.max_ns.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

SelfTotals self_timing_totals() {
  SelfTotals t;
  for (int i = 0; i < kSelfParts; ++i) {
    t[i].count = g_parts[i].count.load(std::memory_order_relaxed);
    t[i].ns = g_parts[i].ns.load(std::memory_order_relaxed);
    t[i].max_ns = g_parts[i].max_ns.load(std::memory_order_relaxed);
  }
  return t;
}

void reset_self_timing() {
  for (PartCounters& c : g_parts) {
    c.count.store(0, std::memory_order_relaxed);
    c.ns.store(0, std::memory_order_relaxed);
    c.max_ns.store(0, std::memory_order_relaxed);
  }
}

std::vector<std::string> format_self_timing(const SelfTotals& totals, std::uint64_t timer_ns) {
  std::vector<std::string> lines;
  for (int i = 0; i < kSelfParts; ++i) {
    const SelfPartTotal& t = totals[i];
    if (t.count == 0) continue;
    lines.push_back(std::string(to_string(static_cast<SelfPart>(i))) + ": " + grouped(t.count) +
                    " x " + duration(static_cast<double>(t.ns) / static_cast<double>(t.count)) +
                    " = " + duration(static_cast<double>(t.ns)) + " (max " +
                    duration(static_cast<double>(t.max_ns)) + ")");
  }
  if (lines.empty()) return {"nothing timed"};
  lines.push_back("each figure includes the timing itself: " +
                  duration(static_cast<double>(timer_ns)) + " a run");
  return lines;
}

std::uint64_t self_timer_cost_ns() {
  std::uint64_t best = UINT64_MAX;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t a = SelfTimer::now_ns();
    const std::uint64_t b = SelfTimer::now_ns();
    best = std::min(best, b - a);
  }
  return best;
}

bool parse_self_timing(const char* value) {
  if (value == nullptr) return false;
  const std::string_view v(value);
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

}  // namespace flopline::capture
