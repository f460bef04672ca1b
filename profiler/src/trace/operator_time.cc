// Operator ownership of GPU work and operator GPU time; the rules are in
// operator_time.h.
//
// Cost: one pass over the slices to classify them, one binary search per nesting row
// for each launch and each operator, and for each operator a sort of the intervals of
// the work it owns (nested operators' included), so a trace of n GPU slices under
// operators nested d deep costs about d * n log n.
#include "flopline/trace/operator_time.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "flopline/trace/json_value.h"
#include "flopline/trace/slice_terms.h"
#include "flopline/trace/torch_op_args.h"
#include "flopline/trace/trace_args.h"

namespace flopline::trace {
namespace {

enum class SliceClass : std::uint8_t { kUntested, kOther, kOperator, kLaunch, kWork, kAnnotation };

SliceClass classify(std::string_view cat) {
  for (const char* c : {"cpu_op", "user_annotation", "operator"}) {
    if (category_matches(cat, c)) return SliceClass::kOperator;
  }
  for (const char* c : {"cuda_runtime", "cuda_driver", "runtime"}) {
    if (category_matches(cat, c)) return SliceClass::kLaunch;
  }
  for (const char* c : {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}) {
    if (category_matches(cat, c)) return SliceClass::kWork;
  }
  if (category_matches(cat, "gpu_user_annotation")) return SliceClass::kAnnotation;
  return SliceClass::kOther;
}

// One GPU slice an operator owns (20 bytes: an index holds one per owned GPU slice).
struct Item {
  SliceRef slice;
  std::uint32_t owner = kNone;
  bool kernel = false;  // a kernel (not a copy or set)
};

// PyTorch's with_flops counts these (torch/csrc/profiler/util.cpp): they always get
// their shape FLOPs, as key_averages() shows them.
bool pytorch_counts_flops(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::conv2d";
}

bool is_float_precision(std::string_view p) {
  return p == "fp64" || p == "fp32" || p == "tf32" || p == "bf16" || p == "fp16" || p == "fp8";
}

bool contains_tf32(std::string_view name) {
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    if ((name[i] == 't' || name[i] == 'T') && (name[i + 1] == 'f' || name[i + 1] == 'F') &&
        name[i + 2] == '3' && name[i + 3] == '2')
      return true;
  }
  return false;
}

// Length of the union of [start, end) intervals (sorted here).
TimeNs union_length(std::vector<std::pair<TimeNs, TimeNs>>& iv) {
  std::sort(iv.begin(), iv.end());
  TimeNs total = 0;
  TimeNs lo = 0, hi = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (!open || s > hi) {
      if (open) total = add_saturating(total, sub_saturating(hi, lo));
      lo = s;
      hi = e;
      open = true;
    } else {
      hi = std::max(hi, e);
    }
  }
  if (open) total = add_saturating(total, sub_saturating(hi, lo));
  return total;
}

struct TwinKey {
  StringId name;
  std::uint32_t track;
  TimeNs start;
  bool operator==(const TwinKey&) const = default;
};
struct TwinKeyHash {
  std::size_t operator()(const TwinKey& k) const {
    std::size_t h =
        std::hash<std::uint64_t>()((static_cast<std::uint64_t>(k.name) << 32) | k.track);
    return h ^ (std::hash<std::int64_t>()(k.start) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }
};

std::string_view slice_args_text(const Trace& trace, const Slice& s) {
  if (s.args == kNoArgs || s.args >= trace.args.size() || trace.args.is_location(s.args)) return {};
  return trace.args.json(s.args);
}

}  // namespace

const char* to_string(FlopsSource s) {
  switch (s) {
    case FlopsSource::kTrace:
      return "trace";
    case FlopsSource::kShapes:
      return "shapes";
    case FlopsSource::kNested:
      return "nested";
    case FlopsSource::kCounters:
      return "counters";
    case FlopsSource::kNoFlops:
      break;
  }
  return "";
}

FlopsSource own_flops_source(const Trace& trace, const Slice& s) {
  const std::string_view args = slice_args_text(trace, s);
  if (args.empty()) return FlopsSource::kTrace;
  const auto member = json_member(args, kArgFlopsSource);
  if (!member) return FlopsSource::kTrace;
  const auto text = json_string(*member);
  return text && text->starts_with("counters") ? FlopsSource::kCounters : FlopsSource::kTrace;
}

std::optional<double> counted_flops_beside_declared(const Trace& trace, const Slice& s) {
  const std::string_view args = slice_args_text(trace, s);
  if (args.empty()) return std::nullopt;
  // The rule of "flops": a JSON number, finite and not negative; anything else is no count.
  const auto member = json_member(args, kArgCountedFlops);
  if (!member || member->empty()) return std::nullopt;
  const char c = member->front();
  if (!(c == '-' || c == '.' || (c >= '0' && c <= '9'))) return std::nullopt;
  const auto v = json_number(*member);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  return v;
}

struct OperatorIndex::Impl {
  const Trace* trace = nullptr;
  std::vector<OperatorTime> ops;
  std::vector<Item> items;       // owned GPU slices, sorted by the pre-order of their owner
  std::vector<SliceRef> launch;  // while building: per item, the call that launched it
  // Per operator: its subtree's items are items[item_begin, item_end).
  std::vector<std::uint32_t> item_begin, item_end;
  // [track][row][index] -> operator (CPU slices) or item (GPU work) index.
  std::vector<std::vector<std::vector<std::uint32_t>>> at;
  std::unordered_map<TwinKey, std::uint32_t, TwinKeyHash> twins;
  // Top-level ranges: the busy intervals of their window (merged, sorted).
  std::unordered_map<std::uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> windows;
  bool owns_work = false;
  double flops_total = 0;

  std::vector<SliceClass> classes;    // per category StringId
  std::vector<char> work_track;       // per track: not a CPU thread (GPU work may lie there)
  std::vector<char> dtype_precision;  // per operator: precision read from its input dtypes

  SliceClass class_of(const Slice& s) {
    if (s.cat >= classes.size()) return SliceClass::kOther;
    SliceClass& c = classes[s.cat];
    if (c == SliceClass::kUntested) c = classify(trace->str(s.cat));
    return c;
  }
  std::uint32_t lookup(SliceRef r) const {
    if (r.track >= at.size() || r.row >= at[r.track].size() || r.index >= at[r.track][r.row].size())
      return kNone;
    return at[r.track][r.row][r.index];
  }
  void set(SliceRef r, std::uint32_t v) {
    auto& rows = at[r.track];
    if (rows.empty()) {
      rows.resize(trace->tracks[r.track].rows.size());
    }
    auto& row = rows[r.row];
    if (row.empty()) row.assign(trace->tracks[r.track].rows[r.row].size(), kNone);
    row[r.index] = v;
  }
  const Slice& slice(const Item& it) const { return trace->tracks[it.slice.track].at(it.slice); }
  TimeNs start(const Item& it) const { return slice(it).start; }
  TimeNs end(const Item& it) const { return slice(it).end(); }
  std::string_view args_text(const Slice& s) const { return slice_args_text(*trace, s); }

  void collect();
  void join_by_flows();
  void join_by_correlation();
  SliceRef find_work(std::uint32_t track, TimeNs ts) const;
  std::uint32_t enclosing_operator(SliceRef inner, bool strictly_shallower);
  void own_and_time();
  void time_windows();
  void count();
  void roll_up_and_total();
  void adjust_precision(const std::vector<std::uint32_t>& order,
                        const std::vector<std::uint32_t>& pre,
                        const std::vector<std::uint32_t>& size);
  void build_twins();
};

void OperatorIndex::Impl::collect() {
  const Trace& t = *trace;
  classes.assign(t.strings.size(), SliceClass::kUntested);
  at.resize(t.tracks.size());
  work_track.assign(t.tracks.size(), 0);
  for (std::uint32_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& track = t.tracks[ti];
    const bool cpu_thread =
        track.kind == TrackKind::kThread &&
        !(track.process < t.processes.size() && t.processes[track.process].is_gpu);
    work_track[ti] = cpu_thread ? 0 : 1;
    if (!cpu_thread) continue;
    for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
      const auto& row = track.rows[r];
      for (std::uint32_t i = 0; i < row.size(); ++i) {
        if (class_of(row[i]) != SliceClass::kOperator) continue;
        const SliceRef ref{ti, r, i};
        OperatorTime op;
        op.slice = ref;
        set(ref, static_cast<std::uint32_t>(ops.size()));
        ops.push_back(std::move(op));
      }
    }
  }
  if (ops.empty()) return;  // nothing can own GPU work: no item is kept
  for (std::uint32_t ti = 0; ti < t.tracks.size(); ++ti) {
    if (!work_track[ti]) continue;
    const Track& track = t.tracks[ti];
    for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
      const auto& row = track.rows[r];
      for (std::uint32_t i = 0; i < row.size(); ++i) {
        if (class_of(row[i]) != SliceClass::kWork) continue;
        const SliceRef ref{ti, r, i};
        set(ref, static_cast<std::uint32_t>(items.size()));
        items.push_back(Item{ref, kNone, category_matches(t.str(row[i].cat), "kernel")});
      }
    }
  }
  launch.assign(items.size(), SliceRef{});
}

// The GPU work slice of `track` that contains ts, the deepest one, preferring one that
// starts at ts (a flow's "f" end lies at its kernel's start).
SliceRef OperatorIndex::Impl::find_work(std::uint32_t track, TimeNs ts) const {
  if (track >= work_track.size() || !work_track[track]) return {};
  const Track& tr = trace->tracks[track];
  SliceRef best;
  bool best_starts = false;
  for (std::uint32_t r = 0; r < tr.rows.size(); ++r) {
    const auto& row = tr.rows[r];
    auto it = std::upper_bound(row.begin(), row.end(), ts,
                               [](TimeNs v, const Slice& s) { return v < s.start; });
    if (it == row.begin()) continue;
    --it;
    if (it->end() < ts) continue;
    const SliceRef ref{track, r, static_cast<std::uint32_t>(it - row.begin())};
    if (lookup(ref) == kNone) continue;  // not GPU work
    const bool starts = it->start == ts;
    if (!best.valid() || (starts && !best_starts)) {
      best = ref;
      best_starts = starts;
    }
  }
  return best;
}

void OperatorIndex::Impl::join_by_flows() {
  const Trace& t = *trace;
  for (const Flow& f : t.flows) {
    if (!f.joined()) continue;
    const SliceRef from = f.from.slice;
    if (from.track >= t.tracks.size()) continue;
    const Slice& src = t.tracks[from.track].at(from);
    if (class_of(src) == SliceClass::kWork) continue;  // GPU -> GPU arrows are no launches
    SliceRef to = f.to.slice;
    std::uint32_t item = to.track < work_track.size() && work_track[to.track] ? lookup(to) : kNone;
    if (item == kNone && f.to.track != from.track) {
      // The flow may bind to a slice around the kernel (a gpu_user_annotation extent).
      to = find_work(f.to.track, f.to.ts);
      item = to.valid() ? lookup(to) : kNone;
    }
    if (item == kNone || item >= items.size() || launch[item].valid()) continue;
    launch[item] = from;
  }
}

void OperatorIndex::Impl::join_by_correlation() {
  const Trace& t = *trace;
  bool missing = false;
  for (const SliceRef& l : launch) missing = missing || !l.valid();
  if (!missing) return;
  auto correlation = [&](const Slice& s) -> std::optional<std::int64_t> {
    const std::string_view text = args_text(s);
    if (text.empty()) return std::nullopt;
    const auto v = json_member(text, "correlation");
    return v ? json_int(*v) : std::nullopt;
  };
  // correlation -> launch slice; ids seen twice (several processes) are left out.
  std::unordered_map<std::int64_t, SliceRef> launch_of;
  std::unordered_map<std::int64_t, bool> ambiguous;
  for (std::uint32_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& track = t.tracks[ti];
    if (track.kind != TrackKind::kThread) continue;
    for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
      for (std::uint32_t i = 0; i < track.rows[r].size(); ++i) {
        const Slice& s = track.rows[r][i];
        if (class_of(s) != SliceClass::kLaunch) continue;
        const auto c = correlation(s);
        if (!c) continue;
        if (!launch_of.emplace(*c, SliceRef{ti, r, i}).second) ambiguous[*c] = true;
      }
    }
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (launch[i].valid()) continue;
    const auto c = correlation(slice(items[i]));
    if (!c || ambiguous.count(*c) != 0) continue;
    const auto found = launch_of.find(*c);
    if (found != launch_of.end()) launch[i] = found->second;
  }
}

// The deepest operator slice of `inner`'s track that encloses it (on a nesting row
// above it when strictly_shallower), kNone when none.
std::uint32_t OperatorIndex::Impl::enclosing_operator(SliceRef inner, bool strictly_shallower) {
  const Track& tr = trace->tracks[inner.track];
  const Slice& s = tr.at(inner);
  std::uint32_t top = tr.nesting_rows;
  if (strictly_shallower && inner.row < tr.nesting_rows) top = inner.row;
  for (std::uint32_t r = top; r-- > 0;) {
    const auto& row = tr.rows[r];
    auto it = std::upper_bound(row.begin(), row.end(), s.start,
                               [](TimeNs v, const Slice& x) { return v < x.start; });
    if (it == row.begin()) continue;
    --it;
    if (it->end() < s.end()) continue;
    const SliceRef ref{inner.track, r, static_cast<std::uint32_t>(it - row.begin())};
    if (ref.row == inner.row && ref.index == inner.index) continue;
    if (class_of(*it) != SliceClass::kOperator) continue;
    const std::uint32_t op = lookup(ref);
    if (op != kNone) return op;
  }
  return kNone;
}

void OperatorIndex::Impl::own_and_time() {
  const Trace& t = *trace;
  // Parents: ops were collected track by track, shallow rows first, so a parent always
  // comes before its children.
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    ops[o].parent = enclosing_operator(ops[o].slice, true);
    if (ops[o].parent != kNone) ops[o].depth = ops[ops[o].parent].depth + 1;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const SliceRef l = launch[i];
    if (!l.valid() || l.track >= t.tracks.size()) continue;
    const Track& tr = t.tracks[l.track];
    if (tr.kind != TrackKind::kThread) continue;
    const std::uint32_t own = lookup(l);
    const bool launch_is_op = own != kNone && class_of(tr.at(l)) == SliceClass::kOperator;
    items[i].owner = launch_is_op ? own : enclosing_operator(l, false);
  }
  time_windows();
  std::vector<SliceRef>().swap(launch);
  // Only owned work is kept.
  for (const Item& it : items) {
    if (it.owner == kNone) set(it.slice, kNone);
  }
  std::erase_if(items, [](const Item& it) { return it.owner == kNone; });
  // Pre-order of the operator forest: a subtree is a contiguous run.
  std::vector<std::vector<std::uint32_t>> children(ops.size());
  std::vector<std::uint32_t> roots;
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    (ops[o].parent == kNone ? roots : children[ops[o].parent]).push_back(o);
  }
  std::vector<std::uint32_t> pre(ops.size(), 0), size(ops.size(), 1), order;
  order.reserve(ops.size());
  std::vector<std::uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const std::uint32_t o = stack.back();
    stack.pop_back();
    pre[o] = static_cast<std::uint32_t>(order.size());
    order.push_back(o);
    for (auto c = children[o].rbegin(); c != children[o].rend(); ++c) stack.push_back(*c);
  }
  for (std::size_t k = order.size(); k-- > 0;) {
    const std::uint32_t o = order[k];
    if (ops[o].parent != kNone) size[ops[o].parent] += size[o];
  }
  // By their owner's pre-order: a subtree's items are one run.
  std::stable_sort(items.begin(), items.end(),
                   [&](const Item& a, const Item& b) { return pre[a.owner] < pre[b.owner]; });
  for (std::uint32_t i = 0; i < items.size(); ++i) set(items[i].slice, i);
  std::vector<std::uint32_t> first_of_pre(order.size() + 1, 0);
  {
    std::uint32_t i = 0;
    for (std::uint32_t p = 0; p <= order.size(); ++p) {
      while (i < items.size() && pre[items[i].owner] < p) ++i;
      first_of_pre[p] = i;
    }
  }
  item_begin.assign(ops.size(), 0);
  item_end.assign(ops.size(), 0);
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    OperatorTime& op = ops[o];
    const std::uint32_t lo = first_of_pre[pre[o]];
    const std::uint32_t hi = first_of_pre[pre[o] + size[o]];
    item_begin[o] = lo;
    item_end[o] = hi;
    op.items = hi - lo;
    if (op.items == 0) continue;
    owns_work = true;
    iv.clear();
    op.gpu_start = start(items[lo]);
    op.gpu_end = end(items[lo]);
    op.gpu_track = items[lo].slice.track;
    for (std::uint32_t i = lo; i < hi; ++i) {
      const Item& it = items[i];
      const TimeNs s0 = start(it), s1 = end(it);
      const TimeNs dur = sub_saturating(s1, s0);
      op.device_total_ns = add_saturating(op.device_total_ns, dur);
      if (it.owner == o) {
        ++op.self_items;
        op.self_ns = add_saturating(op.self_ns, dur);
      }
      if (it.kernel) ++op.kernels;
      op.gpu_start = std::min(op.gpu_start, s0);
      op.gpu_end = std::max(op.gpu_end, s1);
      iv.emplace_back(s0, s1);
    }
    op.extent_ns = sub_saturating(op.gpu_end, op.gpu_start);
    op.busy_ns = union_length(iv);
  }
  count();
  adjust_precision(order, pre, size);
  roll_up_and_total();
}

// The windows of top-level ranges (operator_time.h). Launches are sorted by start per
// process, so a window is a binary search and a walk over the launches inside it.
void OperatorIndex::Impl::time_windows() {
  const Trace& t = *trace;
  std::vector<std::uint32_t> ranges;
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    const Slice& s = t.tracks[ops[o].slice.track].at(ops[o].slice);
    if (ops[o].parent == kNone && category_matches(t.str(s.cat), "user_annotation"))
      ranges.push_back(o);
  }
  if (ranges.empty()) return;
  struct Launched {
    TimeNs start, end;  // the launching call
    TimeNs work_start, work_end;
  };
  std::unordered_map<std::uint32_t, std::vector<Launched>> by_process;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const SliceRef l = launch[i];
    if (!l.valid() || l.track >= t.tracks.size()) continue;
    const Track& tr = t.tracks[l.track];
    if (tr.kind != TrackKind::kThread) continue;
    const Slice& call = tr.at(l);
    by_process[tr.process].push_back({call.start, call.end(), start(items[i]), end(items[i])});
  }
  for (auto& [process, launched] : by_process) {
    std::sort(launched.begin(), launched.end(),
              [](const Launched& a, const Launched& b) { return a.start < b.start; });
  }
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  for (std::uint32_t o : ranges) {
    OperatorTime& op = ops[o];
    const Slice& s = t.tracks[op.slice.track].at(op.slice);
    op.window_busy_ns = 0;
    const auto found = by_process.find(t.tracks[op.slice.track].process);
    if (found == by_process.end()) continue;
    const std::vector<Launched>& launched = found->second;
    iv.clear();
    auto it = std::partition_point(launched.begin(), launched.end(),
                                   [&](const Launched& l) { return l.start < s.start; });
    for (; it != launched.end() && it->start <= s.end(); ++it) {
      if (it->end <= s.end()) iv.emplace_back(it->work_start, it->work_end);
    }
    if (iv.empty()) continue;
    op.window_busy_ns = union_length(iv);
    // Merged, for clipping to a range later.
    std::vector<std::pair<TimeNs, TimeNs>>& merged = windows[o];
    for (const auto& [a, b] : iv) {  // sorted by union_length
      if (!merged.empty() && a <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, b);
      } else {
        merged.emplace_back(a, b);
      }
    }
  }
}

void OperatorIndex::Impl::count() {
  const Trace& t = *trace;
  // Shape counts wait for the nesting rules below.
  std::vector<std::optional<TorchOpCounts>> shapes(ops.size());
  dtype_precision.assign(ops.size(), 0);
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    OperatorTime& op = ops[o];
    const Slice& s = t.tracks[op.slice.track].at(op.slice);
    const SliceMetrics m = t.metrics_of(s);
    const std::string_view name = t.str(s.name);
    const bool formula = has_torch_flop_formula(name);
    if (m.has_flops() || m.has_bytes()) {
      op.metrics = m;
      if (m.has_flops()) op.flops_source = own_flops_source(t, s);
    }
    if (!formula && !m.has_flops() && !m.has_bytes()) continue;
    const std::string_view args = args_text(s);
    if (args.empty()) continue;
    if (const auto p = json_member(args, kArgPrecision)) {
      if (const auto text = json_string(*p)) op.precision = normalize_precision(*text);
    }
    if (!formula) continue;
    if (const auto a = parse_torch_op_args(args)) {
      shapes[o] = torch_op_counts(name, *a);
      if (op.precision.empty()) {
        op.precision = shapes[o]->precision;
        dtype_precision[o] = 1;
      }
    }
  }
  auto take_shapes = [&](std::uint32_t o) {
    OperatorTime& op = ops[o];
    op.metrics.flops = *shapes[o]->flops;
    if (!op.metrics.has_bytes() && shapes[o]->bytes) op.metrics.bytes = *shapes[o]->bytes;
    op.flops_source = FlopsSource::kShapes;
  };
  // PyTorch's own operators first; then whether each subtree holds FLOPs below its root.
  std::vector<char> below(ops.size(), 0);
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    const std::string_view name = t.str(t.tracks[ops[o].slice.track].at(ops[o].slice).name);
    if (!ops[o].metrics.has_flops() && shapes[o] && shapes[o]->flops && pytorch_counts_flops(name))
      take_shapes(o);
  }
  for (std::uint32_t o = static_cast<std::uint32_t>(ops.size()); o-- > 0;) {
    const std::uint32_t p = ops[o].parent;
    if (p != kNone && (below[o] || ops[o].metrics.has_flops())) below[p] = 1;
  }
  // The other formula operators fill gaps, outermost first (parents come first).
  std::vector<char> above(ops.size(), 0);
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    const std::uint32_t p = ops[o].parent;
    if (p != kNone) above[o] = above[p] || ops[p].metrics.has_flops();
    if (!ops[o].metrics.has_flops() && shapes[o] && shapes[o]->flops && !above[o] && !below[o])
      take_shapes(o);
  }
}

void OperatorIndex::Impl::roll_up_and_total() {
  const Trace& t = *trace;
  const std::size_t n = ops.size();
  // Per operator: the counts of the outermost carriers in its subtree, itself included.
  std::vector<double> flops(n, 0), bytes(n, 0);
  std::vector<char> has_flops(n, 0), has_bytes(n, 0), mixed(n, 0);
  std::vector<std::string> precision(n);
  for (std::size_t k = n; k-- > 0;) {  // children come after their parents
    OperatorTime& op = ops[k];
    const bool user_range =
        category_matches(t.str(t.tracks[op.slice.track].at(op.slice).cat), "user_annotation");
    if (user_range && !op.metrics.has_flops() && !op.metrics.has_bytes() &&
        (has_flops[k] || has_bytes[k])) {
      if (has_flops[k]) op.metrics.flops = flops[k];
      if (has_bytes[k]) op.metrics.bytes = bytes[k];
      if (has_flops[k]) op.flops_source = FlopsSource::kNested;
      if (op.precision.empty() && !mixed[k]) op.precision = precision[k];
    }
    if (op.metrics.has_flops()) {
      flops[k] = op.metrics.flops;
      has_flops[k] = 1;
      precision[k] = op.precision;
      mixed[k] = 0;
    }
    if (op.metrics.has_bytes()) {
      bytes[k] = op.metrics.bytes;
      has_bytes[k] = 1;
    }
    const std::uint32_t p = op.parent;
    if (p == kNone) continue;
    if (has_flops[k]) {
      if (!has_flops[p]) {
        precision[p] = precision[k];
        mixed[p] = mixed[k];
      } else if (mixed[k] || precision[p] != precision[k]) {
        mixed[p] = 1;
      }
      flops[p] += flops[k];
      has_flops[p] = 1;
    }
    if (has_bytes[k]) {
      bytes[p] += bytes[k];
      has_bytes[p] = 1;
    }
  }
  std::vector<char> above(n, 0);
  for (std::size_t o = 0; o < n; ++o) {
    const std::uint32_t p = ops[o].parent;
    if (p != kNone) above[o] = above[p] || ops[p].metrics.has_flops();
    ops[o].flops_in_total = ops[o].metrics.has_flops() && !above[o];
    if (ops[o].flops_in_total) flops_total += ops[o].metrics.flops;
  }
}

void OperatorIndex::Impl::adjust_precision(const std::vector<std::uint32_t>& order,
                                           const std::vector<std::uint32_t>& pre,
                                           const std::vector<std::uint32_t>& size) {
  const Trace& t = *trace;
  auto name_of = [&](std::uint32_t o) {
    return t.str(t.tracks[ops[o].slice.track].at(ops[o].slice).name);
  };
  // Measured first: an operator without a precision of its own (emit_nvtx's ranges carry
  // sizes but no dtypes), or with only its tensors' dtype, takes the precision of its
  // kernels' counted FLOPs when they all agree: a TF32 matmul whose tensors are fp32 is
  // tf32, whatever the kernel is called.
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    if (!ops[o].metrics.has_flops() || (!ops[o].precision.empty() && !dtype_precision[o])) continue;
    std::string counted;
    bool agree = true;
    for (std::uint32_t i = item_begin[o]; i < item_end[o] && agree; ++i) {
      const std::string_view args = args_text(t.tracks[items[i].slice.track].at(items[i].slice));
      const auto p = args.empty() ? std::nullopt : json_member(args, kArgPrecision);
      const auto text = p ? json_string(*p) : std::nullopt;
      if (!text || text->empty()) continue;
      const std::string kernel = normalize_precision(*text);
      agree = counted.empty() || counted == kernel;
      counted = kernel;
    }
    if (agree && !counted.empty()) {
      ops[o].precision = counted;
      dtype_precision[o] = 0;  // measured: the rules below are for dtypes
    }
  }
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    if (!ops[o].metrics.has_flops() || ops[o].precision != "fp32" || !dtype_precision[o]) continue;
    const std::uint32_t end = pre[o] + size[o];  // the subtree is order[pre[o], end)
    const std::string_view name = name_of(o);
    std::string cast;
    for (std::uint32_t k = pre[o] + 1; k < end && cast.empty(); ++k) {
      const std::uint32_t d = order[k];
      if (name_of(d) == name && !ops[d].precision.empty() && ops[d].precision != "fp32") {
        cast = ops[d].precision;
      }
    }
    for (std::uint32_t k = pre[o] + 1; k < end && cast.empty(); ++k) {
      const std::uint32_t d = order[k];
      if (name_of(d) != "aten::copy_") continue;
      const std::string_view args = args_text(t.tracks[ops[d].slice.track].at(ops[d].slice));
      if (args.empty()) continue;
      const auto a = parse_torch_op_args(args);
      if (!a || a->types.empty()) continue;
      const std::string_view dst = precision_of_torch_dtype(a->types[0]);
      if (is_float_precision(dst) && dst != "fp32" && dst != "fp64") cast = std::string(dst);
    }
    if (!cast.empty()) {
      ops[o].precision = cast;
      continue;
    }
    for (std::uint32_t i = item_begin[o]; i < item_end[o]; ++i) {
      const Slice& k = t.tracks[items[i].slice.track].at(items[i].slice);
      if (contains_tf32(t.str(k.name))) {
        ops[o].precision = "tf32";
        break;
      }
    }
  }
}

void OperatorIndex::Impl::build_twins() {
  const Trace& t = *trace;
  bool any = false;
  for (const auto& c : classes) any = any || c == SliceClass::kAnnotation;
  if (!any) return;
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    if (ops[o].items == 0) continue;
    const StringId name = t.tracks[ops[o].slice.track].at(ops[o].slice).name;
    std::unordered_map<std::uint32_t, TimeNs> first_on_track;
    for (std::uint32_t i = item_begin[o]; i < item_end[o]; ++i) {
      auto [it, fresh] = first_on_track.try_emplace(items[i].slice.track, start(items[i]));
      if (!fresh) it->second = std::min(it->second, start(items[i]));
    }
    // Parents come first: the outermost operator of a name keeps the key.
    for (const auto& [track, start] : first_on_track)
      twins.try_emplace(TwinKey{name, track, start}, o);
  }
}

OperatorIndex::OperatorIndex() : impl_(std::make_unique<Impl>()) {}
OperatorIndex::OperatorIndex(OperatorIndex&&) noexcept = default;
OperatorIndex& OperatorIndex::operator=(OperatorIndex&&) noexcept = default;
OperatorIndex::~OperatorIndex() = default;

OperatorIndex OperatorIndex::build(const Trace& trace) {
  OperatorIndex index;
  Impl& im = *index.impl_;
  im.trace = &trace;
  im.collect();
  if (!im.ops.empty() || !im.items.empty()) {
    im.join_by_flows();
    im.join_by_correlation();
    im.own_and_time();
    im.build_twins();
  }
  im.classes.clear();
  im.classes.shrink_to_fit();
  return index;
}

const std::vector<OperatorTime>& OperatorIndex::operators() const {
  return impl_->ops;
}

bool OperatorIndex::owns_gpu_work() const {
  return impl_->owns_work;
}

std::uint32_t OperatorIndex::operator_at(SliceRef op_slice) const {
  const std::uint32_t o = impl_->lookup(op_slice);
  if (o == kNone || o >= impl_->ops.size()) return kNone;
  const SliceRef s = impl_->ops[o].slice;
  return s.track == op_slice.track && s.row == op_slice.row && s.index == op_slice.index ? o
                                                                                         : kNone;
}

std::uint32_t OperatorIndex::twin_of(SliceRef gpu_annotation) const {
  const Impl& im = *impl_;
  if (im.twins.empty() || im.trace == nullptr || gpu_annotation.track >= im.trace->tracks.size())
    return kNone;
  const Slice& s = im.trace->tracks[gpu_annotation.track].at(gpu_annotation);
  const auto it = im.twins.find(TwinKey{s.name, gpu_annotation.track, s.start});
  return it == im.twins.end() ? kNone : it->second;
}

InheritedCounts OperatorIndex::inherited(SliceRef gpu_slice) const {
  const Impl& im = *impl_;
  InheritedCounts r;
  const std::uint32_t i = im.lookup(gpu_slice);
  if (i == kNone || i >= im.items.size()) return r;
  const Item& it = im.items[i];
  if (it.slice.track != gpu_slice.track || it.slice.row != gpu_slice.row ||
      it.slice.index != gpu_slice.index)
    return r;
  r.owner = it.owner;
  bool counts_found = !it.kernel;  // copies and sets keep their own bytes
  for (std::uint32_t o = it.owner; o != kNone; o = im.ops[o].parent) {
    const OperatorTime& op = im.ops[o];
    if (r.precision.empty() && !op.precision.empty()) r.precision = op.precision;
    if (!counts_found && (op.metrics.has_flops() || op.metrics.has_bytes())) {
      counts_found = true;
      if (op.kernels == 1 && op.flops_source != FlopsSource::kNested) {
        r.metrics = op.metrics;
        r.source = op.flops_source;
      }
    }
    if (!r.precision.empty() && counts_found) break;
  }
  return r;
}

TimeNs OperatorIndex::busy_within(std::uint32_t op, TimeNs begin, TimeNs end) const {
  const Impl& im = *impl_;
  if (op >= im.ops.size()) return 0;
  std::vector<std::pair<TimeNs, TimeNs>> iv;
  for (std::uint32_t i = im.item_begin[op]; i < im.item_end[op]; ++i) {
    const TimeNs lo = std::max(im.start(im.items[i]), begin);
    const TimeNs hi = std::min(im.end(im.items[i]), end);
    if (hi > lo) iv.emplace_back(lo, hi);
  }
  return union_length(iv);
}

TimeNs OperatorIndex::window_busy_within(std::uint32_t op, TimeNs begin, TimeNs end) const {
  const auto it = impl_->windows.find(op);
  if (it == impl_->windows.end()) return 0;
  TimeNs total = 0;
  for (const auto& [a, b] : it->second) {
    const TimeNs lo = std::max(a, begin);
    const TimeNs hi = std::min(b, end);
    if (hi > lo) total = add_saturating(total, sub_saturating(hi, lo));
  }
  return total;
}

double OperatorIndex::total_flops() const {
  return impl_->flops_total;
}

}  // namespace flopline::trace
