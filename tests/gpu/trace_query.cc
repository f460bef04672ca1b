#include "trace_query.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"

extern char** environ;

namespace flopline::gputest {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env) {
  CommandResult r;
  char out_name[] = "/tmp/flopline-gputest-out-XXXXXX";
  char err_name[] = "/tmp/flopline-gputest-err-XXXXXX";
  const int out_fd = mkstemp(out_name);
  const int err_fd = mkstemp(err_name);
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) envs.emplace_back(*e);
  for (const std::string& e : env) envs.push_back(e);
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execvpe(args[0], args.data(), envp.data());  // "python3": found on PATH
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_name);
  r.err = slurp(err_name);
  unlink(out_name);
  unlink(err_name);
  return r;
}

std::vector<SliceView> TraceView::by_cat(const std::string& cat) const {
  std::vector<SliceView> v;
  for (const SliceView& s : slices) {
    if (s.cat == cat) v.push_back(s);
  }
  return v;
}

std::vector<SliceView> TraceView::named(const std::string& cat, const std::string& part) const {
  std::vector<SliceView> v;
  for (const SliceView& s : slices) {
    if (s.cat == cat && s.name.find(part) != std::string::npos) v.push_back(s);
  }
  return v;
}

namespace {
std::uint64_t slice_key(const trace::SliceRef& r) {
  return (static_cast<std::uint64_t>(r.track) << 40) ^ (static_cast<std::uint64_t>(r.row) << 32) ^
         r.index;
}
}  // namespace

const FlowView* TraceView::flow_to(const SliceView& s) const {
  const auto it = flow_by_end.find(slice_key(s.ref));
  return it == flow_by_end.end() ? nullptr : &flows[it->second];
}

std::vector<SliceView> TraceView::launched_in(const SliceView& range,
                                              const std::string& cat) const {
  std::vector<SliceView> v;
  for (const SliceView& s : slices) {
    if (s.cat != cat) continue;
    const FlowView* f = flow_to(s);
    if (f != nullptr && f->from.pid == range.pid && f->from.tid == range.tid &&
        f->from.start >= range.start && f->from.end <= range.end) {
      v.push_back(s);
    }
  }
  return v;
}

std::optional<TraceView> load_trace(const std::string& path, std::string* error) {
  trace::ReadResult r = trace::read_chrome_trace_file(path);
  if (!r.ok()) {
    if (error) *error = r.error->message();
    return std::nullopt;
  }
  TraceView v;
  v.trace = std::move(r.trace);
  const trace::Trace& t = v.trace;
  auto view = [&](std::uint32_t track, std::uint32_t row, std::uint32_t index) {
    const trace::Track& tr = t.tracks[track];
    const trace::Slice& s = tr.rows[row][index];
    SliceView sv;
    sv.name = std::string(t.str(s.name));
    sv.cat = std::string(t.str(s.cat));
    sv.start = s.start;
    sv.end = s.end();
    sv.pid = t.processes[tr.process].pid;
    sv.tid = tr.tid;
    if (s.args != trace::kNoArgs) sv.args = std::string(t.args.json(s.args));
    sv.metrics = t.metrics_of(s);
    sv.ref = {track, row, index};
    return sv;
  };
  for (std::uint32_t ti = 0; ti < t.tracks.size(); ++ti) {
    for (std::uint32_t ri = 0; ri < t.tracks[ti].rows.size(); ++ri) {
      for (std::uint32_t si = 0; si < t.tracks[ti].rows[ri].size(); ++si) {
        v.slices.push_back(view(ti, ri, si));
      }
    }
  }
  for (const trace::Flow& f : t.flows) {
    if (!f.joined()) {
      ++v.unjoined_flows;
      continue;
    }
    v.flows.push_back({view(f.from.slice.track, f.from.slice.row, f.from.slice.index),
                       view(f.to.slice.track, f.to.slice.row, f.to.slice.index)});
    v.flow_by_end[slice_key(f.to.slice)] = v.flows.size() - 1;
  }
  return v;
}

std::optional<double> arg_number(const SliceView& s, const std::string& key) {
  const auto m = trace::json_member(s.args, key);
  if (!m) return std::nullopt;
  return trace::json_number(*m);
}

std::vector<std::string> traces_named_in(const std::string& run_output) {
  std::vector<std::string> files;
  std::istringstream in(run_output);
  std::string line;
  const std::string prefix = "flopline: trace: ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) files.push_back(line.substr(prefix.size()));
  }
  return files;
}

}  // namespace flopline::gputest
