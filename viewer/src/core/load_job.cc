// Loading trace files for the viewer, on the calling thread or on a worker thread.
#include "core/load_job.h"

#include <algorithm>
#include <climits>
#include <new>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace flopline::viewer {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The reader's report as lines for the status bar: skipped events and warnings.
void add_report(const std::string& label, const trace::TraceReport& r,
                std::vector<std::string>& out) {
  if (r.events_skipped > 0) {
    std::string line = label + ": " + std::to_string(r.events_skipped) + " of " +
                       std::to_string(r.events_total) + " events skipped (";
    for (std::size_t i = 0; i < r.skip_reasons.size(); ++i) {
      if (i > 0) line += "; ";
      line += r.skip_reasons[i].first + ": " + std::to_string(r.skip_reasons[i].second);
    }
    out.push_back(line + ")");
  }
  for (const std::string& w : r.warnings) out.push_back(label + ": " + w);
}

}  // namespace

std::vector<const trace::Trace*> LoadResult::trace_list() const {
  std::vector<const trace::Trace*> list;
  list.reserve(files.size());
  for (const auto& f : files) list.push_back(&f->trace);
  return list;
}

std::vector<const trace::OperatorIndex*> LoadResult::operator_list() const {
  std::vector<const trace::OperatorIndex*> list;
  list.reserve(files.size());
  for (const auto& f : files) list.push_back(&f->operators);
  return list;
}

std::uint64_t LoadResult::event_count() const {
  std::uint64_t n = 0;
  for (const auto& f : files) n += f->trace.report.events_loaded;
  return n;
}

double LoadProgress::fraction() const {
  if (files_total == 0) return 0;
  double current = 0;
  if (bytes_total > 0 && files_done < files_total) {
    current = static_cast<double>(bytes_done) / static_cast<double>(bytes_total);
  }
  return std::clamp((static_cast<double>(files_done) + current) / files_total, 0.0, 1.0);
}

namespace {

// Reads one file into `result` (a failure becomes an error line). False when cancelled.
bool read_one(const std::string& path, std::size_t input, const LoadOptions& options,
              const trace::ReadOptions& read, LoadResult& result) try {
  // Before reading: the args source records the file's size and time, to notice a file
  // changed under it later.
  ArgsSource args(path);
  trace::ReadOptions ro = read;
  ro.args = options.args;
  trace::ReadResult r = trace::read_chrome_trace_file(path, ro);
  if (!r.ok()) {
    if (r.error->reason == "cancelled") return false;
    result.errors.push_back(r.error->message());
    return true;
  }
  auto file = std::make_unique<LoadedFile>();
  file->path = path;
  file->input = input;
  file->label = input < options.labels.size() ? options.labels[input] : base_name(path);
  file->trace = std::move(r.trace);
  file->args = std::move(args);
  if (options.prepare) options.prepare(file->trace);
  file->operators = trace::OperatorIndex::build(file->trace);
  file->ranks = rank_inputs(file->trace);
  add_report(file->label, file->trace.report, result.warnings);
  result.files.push_back(std::move(file));
  return true;
} catch (const std::bad_alloc&) {
  // The reader names the file when it runs out; this is the loading around it.
  result.errors.push_back(path + ": out of memory while loading it");
  return true;
}

// After the last file: layout, flow index, time bounds, gzip args indexing.
void lay_out(LoadResult& result, const LoadOptions& options, bool cancelled) {
  result.cancelled = cancelled;
  if (cancelled) {
    result.files.clear();
    return;
  }
  const std::vector<const trace::Trace*> list = result.trace_list();
  std::vector<std::string> labels;
  for (const auto& f : result.files) labels.push_back(f->label);
  result.layout = TimelineLayout::build(list, labels, options.layout);
  result.flows = FlowIndex::build(list);
  std::vector<const RankInputs*> ranks;
  for (const auto& f : result.files) ranks.push_back(&f->ranks);
  result.rank_summary = build_rank_summary(ranks, labels);
  if (options.diff) {
    DiffSideTraces a{.given = options.diff->a_given, .traces = {}, .operators = {}};
    DiffSideTraces b{.given = options.diff->b_given, .traces = {}, .operators = {}};
    for (const auto& f : result.files) {
      DiffSideTraces& side = f->input < options.diff->a_paths ? a : b;
      side.traces.push_back(&f->trace);
      side.operators.push_back(&f->operators);
    }
    result.diff = build_diff_table(a, b, options.diff->by);
  }
  bool any = false;
  result.begin_ns = INT64_MAX;
  result.end_ns = INT64_MIN;
  for (const auto& f : result.files) {
    if (options.release_model_flows) release_model_flows(f->trace);
    if (f->trace.slice_count() + f->trace.instant_count() + f->trace.counter_point_count() > 0) {
      const auto [b, e] = f->trace.time_bounds();
      result.begin_ns = std::min(result.begin_ns, b);
      result.end_ns = std::max(result.end_ns, e);
      any = true;
    }
    f->counter_index.clear();
    f->counter_index.reserve(f->trace.counters.size());
    for (const trace::CounterSeries& c : f->trace.counters) f->counter_index.emplace_back(c.points);
    f->args.start_indexing();
  }
  if (!any) result.begin_ns = result.end_ns = 0;
#ifdef __GLIBC__
  // The reader's temporaries (text buffers, pending slices) are freed by now; give
  // the pages back so the resident size is the model's.
  malloc_trim(0);
#endif
}

// lay_out, with running out of memory an error that names the files, never an abort
// (in LoadJob this runs on its own thread, where an escaping exception would end the
// process).
void finish(LoadResult& result, const LoadOptions& options, bool cancelled) {
  try {
    lay_out(result, options, cancelled);
  } catch (const std::bad_alloc&) {
    std::string names;
    for (const auto& f : result.files) names += (names.empty() ? "" : ", ") + f->path;
    result.files.clear();
    result.layout = TimelineLayout{};
    result.flows = FlowIndex{};
    result.rank_summary = RankSummary{};
    result.diff.reset();
    result.errors.push_back(names + ": out of memory while laying out the timeline");
  }
}

}  // namespace

LoadResult load_files(const std::vector<std::string>& paths, const LoadOptions& options,
                      const trace::ReadOptions& read) {
  LoadResult result;
  bool cancelled = false;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!read_one(paths[i], i, options, read, result)) {
      cancelled = true;
      break;
    }
  }
  finish(result, options, cancelled);
  return result;
}

LoadJob::LoadJob(std::vector<std::string> paths, LoadOptions options)
    : paths_(std::move(paths)), options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

LoadJob::~LoadJob() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void LoadJob::cancel() {
  cancel_.store(true, std::memory_order_relaxed);
}

LoadProgress LoadJob::progress() const {
  LoadProgress p;
  p.bytes_done = bytes_done_.load(std::memory_order_relaxed);
  p.bytes_total = bytes_total_.load(std::memory_order_relaxed);
  p.events = events_.load(std::memory_order_relaxed);
  p.inflating = inflating_.load(std::memory_order_relaxed);
  p.files_done = files_done_.load(std::memory_order_relaxed);
  p.files_total = static_cast<std::uint32_t>(paths_.size());
  return p;
}

void LoadJob::run() {
  LoadResult all;
  bool cancelled = false;
  for (std::size_t input = 0; input < paths_.size(); ++input) {
    const std::string& path = paths_[input];
    if (cancel_.load(std::memory_order_relaxed)) {
      cancelled = true;
      break;
    }
    bytes_done_ = 0;
    bytes_total_ = 0;
    trace::ReadOptions ro;
    // A .gz is inflated whole before parsing: its compressed bytes give the bar meanwhile.
    ro.inflate_progress = [this](std::uint64_t done, std::uint64_t total) {
      inflating_.store(true, std::memory_order_relaxed);
      bytes_done_.store(done, std::memory_order_relaxed);
      bytes_total_.store(total, std::memory_order_relaxed);
      return !cancel_.load(std::memory_order_relaxed);
    };
    ro.progress = [this](std::uint64_t done, std::uint64_t total, std::uint64_t events) {
      inflating_.store(false, std::memory_order_relaxed);
      bytes_done_.store(done, std::memory_order_relaxed);
      bytes_total_.store(total, std::memory_order_relaxed);
      events_.store(events_before_.load(std::memory_order_relaxed) + events,
                    std::memory_order_relaxed);
      return !cancel_.load(std::memory_order_relaxed);
    };
    const std::size_t before = all.files.size();
    if (!read_one(path, input, options_, ro, all)) {
      cancelled = true;
      break;
    }
    if (all.files.size() > before) events_before_ += all.files.back()->trace.report.events_total;
    events_ = events_before_.load();
    files_done_ += 1;
  }
  finish(all, options_, cancelled || cancel_.load());
  result_ = std::move(all);
  done_.store(true, std::memory_order_release);
}

LoadResult LoadJob::take() {
  if (thread_.joinable()) thread_.join();
  return std::move(result_);
}

}  // namespace flopline::viewer
