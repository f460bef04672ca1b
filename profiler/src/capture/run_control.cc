#include "flopline/capture/run_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

namespace flopline::capture {
namespace {

// Tabs and newlines would break a line apart.
std::string one_field(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '\t', ' ');
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

template <class T>
bool parse_number(std::string_view s, T* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> f;
  for (;;) {
    const std::size_t tab = line.find('\t');
    f.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return f;
    line.remove_prefix(tab + 1);
  }
}

// Complete lines of `text`; `consumed` gets the bytes up to the end of the last one.
std::vector<std::string_view> lines(std::string_view text, std::size_t* consumed = nullptr) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (consumed) *consumed = pos;
  return out;
}

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string read_fd(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

// Appends `text` to `path` under flock(), so lines from several processes never mix.
bool append_locked(const std::string& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  const bool ok = write_all(fd, text);
  flock(fd, LOCK_UN);
  close(fd);
  return ok;
}

bool write_new_file(const std::string& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = write_all(fd, text);
  close(fd);
  return ok;
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

std::string describe_run(const RunEntry& r) {
  std::string s = r.info.id + " (" + r.info.how + ", pid " + std::to_string(r.info.pid);
  if (!r.info.command.empty()) s += ": " + r.info.command;
  return s + ")";
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string runs_directory(const GetEnv& getenv, unsigned uid) {
  if (const char* d = getenv("FLOPLINE_RUNS_DIR"); d != nullptr && *d != '\0') return d;
  std::string base = "/tmp";
  if (const char* t = getenv("TMPDIR"); t != nullptr && *t != '\0') base = t;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "/flopline-runs-" + std::to_string(uid);
}

std::string format_run_info(const RunInfo& i) {
  std::string s;
  auto kv = [&](const char* k, const std::string& v) {
    s += k;
    s += '\t';
    s += one_field(v);
    s += '\n';
  };
  kv("id", i.id);
  kv("pid", std::to_string(i.pid));
  kv("start ticks", std::to_string(i.start_ticks));
  kv("how", i.how);
  kv("capture range", i.capture_range);
  kv("started ns", std::to_string(i.started_unix_ns));
  kv("command", i.command);
  return s;
}

std::optional<RunInfo> parse_run_info(std::string_view text) {
  RunInfo i;
  for (std::string_view line : lines(text)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    const std::string_view k = line.substr(0, tab), v = line.substr(tab + 1);
    if (k == "id") i.id = std::string(v);
    if (k == "pid" && !parse_number(v, &i.pid)) return std::nullopt;
    if (k == "start ticks") parse_number(v, &i.start_ticks);
    if (k == "how") i.how = std::string(v);
    if (k == "capture range") i.capture_range = std::string(v);
    if (k == "started ns") parse_number(v, &i.started_unix_ns);
    if (k == "command") i.command = std::string(v);
  }
  if (i.id.empty() || i.pid <= 0) return std::nullopt;
  return i;
}

const char* to_string(ControlVerb verb) {
  return verb == ControlVerb::kStart ? "start" : "stop";
}

std::string format_command(const ControlCommand& c) {
  return std::to_string(c.seq) + '\t' + to_string(c.verb) + '\t' + std::to_string(c.unix_ns) +
         '\t' + std::to_string(c.from_pid) + '\n';
}

std::vector<ControlCommand> parse_commands(std::string_view text, std::size_t* consumed) {
  std::vector<ControlCommand> out;
  for (std::string_view line : lines(text, consumed)) {
    const std::vector<std::string_view> f = fields(line);
    ControlCommand c;
    if (f.size() < 4 || !parse_number(f[0], &c.seq) || !parse_number(f[2], &c.unix_ns) ||
        !parse_number(f[3], &c.from_pid)) {
      continue;
    }
    if (f[1] == "start") {
      c.verb = ControlVerb::kStart;
    } else if (f[1] == "stop") {
      c.verb = ControlVerb::kStop;
    } else {
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string format_process(const RunProcess& p) {
  return std::to_string(p.pid) + '\t' + std::to_string(p.start_ticks) + '\t' + one_field(p.rank) +
         '\n';
}

std::optional<RunProcess> parse_process(std::string_view text) {
  const std::vector<std::string_view> ls = lines(text);
  if (ls.empty()) return std::nullopt;
  const std::vector<std::string_view> f = fields(ls[0]);
  RunProcess p;
  if (f.size() < 2 || !parse_number(f[0], &p.pid) || !parse_number(f[1], &p.start_ticks) ||
      p.pid <= 0) {
    return std::nullopt;
  }
  if (f.size() > 2) p.rank = std::string(f[2]);
  return p;
}

std::string format_ack(const ControlAck& a) {
  return std::to_string(a.pid) + '\t' + std::to_string(a.seq) + '\t' + one_field(a.result) + '\t' +
         one_field(a.detail) + '\n';
}

std::vector<ControlAck> parse_acks(std::string_view text) {
  std::vector<ControlAck> out;
  for (std::string_view line : lines(text)) {
    const std::vector<std::string_view> f = fields(line);
    ControlAck a;
    if (f.size() < 3 || !parse_number(f[0], &a.pid) || !parse_number(f[1], &a.seq)) continue;
    a.result = std::string(f[2]);
    if (f.size() > 3) a.detail = std::string(f[3]);
    out.push_back(std::move(a));
  }
  return out;
}

std::optional<bool> initial_switch(std::string_view capture_range) {
  std::string error;
  const std::optional<CaptureRangeKind> k = parse_capture_range(capture_range, &error);
  if (!k) return std::nullopt;
  if (*k == CaptureRangeKind::kNone) return true;
  if (*k == CaptureRangeKind::kOnDemand) return false;
  return std::nullopt;
}

bool switch_after(bool initial, const std::vector<ControlCommand>& commands) {
  return commands.empty() ? initial : commands.back().verb == ControlVerb::kStart;
}

const RunEntry* find_run(const std::vector<RunEntry>& runs, std::string_view selector,
                         const std::string& runs_dir, std::string* error) {
  auto fail = [&](std::string why) -> const RunEntry* {
    if (error) *error = std::move(why);
    return nullptr;
  };
  auto listing = [&](const std::vector<const RunEntry*>& rs) {
    std::string s;
    for (const RunEntry* r : rs) s += "\n  " + describe_run(*r);
    return s;
  };
  if (selector.empty()) {
    std::vector<const RunEntry*> live;
    for (const RunEntry& r : runs) {
      if (r.live) live.push_back(&r);
    }
    if (live.size() == 1) return live[0];
    if (live.empty()) {
      return fail("no flopline run or launch is running (none under " + runs_dir +
                  "; FLOPLINE_RUNS_DIR or TMPDIR must be the same as where it was started)");
    }
    return fail(std::to_string(live.size()) +
                " runs are live; name one by its id or by a pid:" + listing(live));
  }
  if (all_digits(selector)) {
    std::int64_t pid = 0;
    if (!parse_number(selector, &pid)) return fail("'" + std::string(selector) + "' is no pid");
    const RunEntry* ended = nullptr;
    for (const RunEntry& r : runs) {
      bool has = r.info.pid == pid;
      for (std::size_t i = 0; i < r.processes.size() && !has; ++i) {
        has = r.processes[i].pid == pid;
      }
      if (!has) continue;
      if (r.live) return &r;
      if (ended == nullptr) ended = &r;  // the most recent: `runs` is newest first
    }
    if (ended != nullptr) return ended;
    return fail("no flopline run holds process " + std::string(selector) +
                " (a pid of flopline run or launch, or of a process of its program that has "
                "started CUDA)");
  }
  std::vector<const RunEntry*> prefixed;
  for (const RunEntry& r : runs) {
    if (r.info.id == selector) return &r;
    if (r.info.id.rfind(selector, 0) == 0) prefixed.push_back(&r);
  }
  if (prefixed.size() == 1) return prefixed[0];
  if (prefixed.empty()) {
    return fail("no run has the id '" + std::string(selector) + "' (under " + runs_dir + ")");
  }
  return fail("'" + std::string(selector) + "' starts the ids of " +
              std::to_string(prefixed.size()) + " runs:" + listing(prefixed));
}

bool check_command(const RunEntry& run, ControlVerb verb, std::string* error) {
  auto fail = [&](std::string why) {
    if (error) *error = std::move(why);
    return false;
  };
  const std::string name = "run " + run.info.id;
  if (!run.live) return fail(name + " has ended");
  const std::optional<bool> initial = initial_switch(run.info.capture_range);
  if (!initial) {
    return fail(name + " records " + run.info.capture_range +
                " windows, which the program's own calls open and close; flopline start and "
                "stop switch runs of flopline launch, and of flopline run without "
                "--capture-range");
  }
  const bool on = switch_after(*initial, run.commands);
  if (verb == ControlVerb::kStart && on) {
    return fail(name + " is already started" +
                (run.commands.empty() ? std::string(" (flopline run records from the start)")
                                      : std::string()) +
                "; flopline stop first");
  }
  if (verb == ControlVerb::kStop && !on) {
    return fail(name + " is already stopped" +
                (run.commands.empty() ? std::string(" (flopline launch waits for flopline start)")
                                      : std::string()));
  }
  return true;
}

// --- files -----------------------------------------------------------------------------

std::optional<std::uint64_t> process_start_ticks(std::int64_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const std::string text = read_fd(fd);
  close(fd);
  // The name, field 2, is in parentheses and may hold spaces and ')': fields 3 and on
  // start after the last ')'. The start time is field 22.
  std::size_t pos = text.rfind(')');
  if (pos == std::string::npos) return std::nullopt;
  ++pos;
  for (int field = 3; field <= 22; ++field) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (field == 22) {
      std::uint64_t ticks = 0;
      if (!parse_number(std::string_view(text).substr(pos, end - pos), &ticks)) {
        return std::nullopt;
      }
      return ticks;
    }
    pos = end;
  }
  return std::nullopt;
}

bool process_alive(std::int64_t pid, std::uint64_t start_ticks) {
  if (pid <= 0) return false;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  if (start_ticks == 0) return true;
  const std::optional<std::uint64_t> now = process_start_ticks(pid);
  return !now || *now == start_ticks;  // no /proc: trust kill()
}

std::optional<std::string> create_run_dir(const std::string& runs_dir, const RunInfo& info,
                                          std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<std::string> {
    if (error) *error = what;
    return std::nullopt;
  };
  if (mkdir(runs_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(runs_dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (lstat(runs_dir.c_str(), &st) != 0) return fail(runs_dir + ": " + std::strerror(errno));
  // Another user's directory (or a link to one) would let them read or feed the commands.
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    return fail(runs_dir + " is not a directory of this user");
  }
  if (info.id.empty() || info.id.find('/') != std::string::npos || info.id[0] == '.') {
    return fail("'" + info.id + "' is no run id");
  }
  const std::string dir = runs_dir + "/" + info.id;
  if (mkdir(dir.c_str(), 0700) != 0) return fail(dir + ": " + std::strerror(errno));
  if (!write_new_file(dir + "/run", format_run_info(info))) {
    return fail(dir + "/run: " + std::strerror(errno));
  }
  return dir;
}

void mark_run_ended(const std::string& run_dir) {
  write_new_file(run_dir + "/ended", "");
}

void prune_runs(const std::string& runs_dir, const ProcessProbe& probe, std::int64_t max_age_s) {
  const std::time_t now = std::time(nullptr);
  for (const RunEntry& r : list_runs(runs_dir, probe)) {
    if (r.live) continue;
    struct stat st {};
    if (stat(r.dir.c_str(), &st) != 0 || now - st.st_mtime <= max_age_s) continue;
    DIR* d = opendir(r.dir.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") unlink((r.dir + "/" + name).c_str());
    }
    closedir(d);
    rmdir(r.dir.c_str());
  }
}

std::optional<RunEntry> read_run(const std::string& run_dir, const ProcessProbe& probe) {
  std::optional<RunInfo> info = parse_run_info(read_file_from(run_dir + "/run", 0));
  if (!info) return std::nullopt;
  RunEntry r;
  r.dir = run_dir;
  r.info = std::move(*info);
  r.live = !exists(run_dir + "/ended") && probe(r.info.pid, r.info.start_ticks);
  r.commands = parse_commands(read_file_from(run_dir + "/commands", 0));
  DIR* d = opendir(run_dir.c_str());
  if (d != nullptr) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("proc-", 0) != 0) continue;
      if (auto p = parse_process(read_file_from(run_dir + "/" + name, 0))) {
        r.processes.push_back(std::move(*p));
      }
    }
    closedir(d);
  }
  std::sort(r.processes.begin(), r.processes.end(),
            [](const RunProcess& a, const RunProcess& b) { return a.pid < b.pid; });
  for (const RunProcess& p : r.processes) {
    r.processes_live.push_back(r.live && probe(p.pid, p.start_ticks));
  }
  return r;
}

std::vector<RunEntry> list_runs(const std::string& runs_dir, const ProcessProbe& probe) {
  std::vector<RunEntry> runs;
  DIR* d = opendir(runs_dir.c_str());
  if (d == nullptr) return runs;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  closedir(d);
  for (const std::string& n : names) {
    if (auto r = read_run(runs_dir + "/" + n, probe)) runs.push_back(std::move(*r));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const RunEntry& a, const RunEntry& b) {
    return a.info.started_unix_ns > b.info.started_unix_ns;
  });
  return runs;
}

std::optional<std::uint64_t> append_command(const std::string& run_dir, ControlVerb verb,
                                            std::int64_t from_pid, std::int64_t unix_ns,
                                            std::string* error) {
  const std::string path = run_dir + "/commands";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (error) *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  // The next number under the lock: two commands at once still get two numbers.
  const std::vector<ControlCommand> old = parse_commands(read_fd(fd));
  ControlCommand c;
  c.seq = old.empty() ? 1 : old.back().seq + 1;
  c.verb = verb;
  c.unix_ns = unix_ns;
  c.from_pid = from_pid;
  const bool ok = write_all(fd, format_command(c));
  if (!ok && error) *error = path + ": " + std::strerror(errno);
  flock(fd, LOCK_UN);
  close(fd);
  if (!ok) return std::nullopt;
  return c.seq;
}

bool register_process(const std::string& run_dir, const RunProcess& p) {
  return write_new_file(run_dir + "/proc-" + std::to_string(p.pid), format_process(p));
}

bool append_ack(const std::string& run_dir, const ControlAck& a) {
  return append_locked(run_dir + "/acks", format_ack(a));
}

std::vector<ControlAck> read_acks(const std::string& run_dir) {
  return parse_acks(read_file_from(run_dir + "/acks", 0));
}

std::string read_file_from(const std::string& path, std::uint64_t offset) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  if (lseek(fd, static_cast<off_t>(offset), SEEK_SET) >= 0) text = read_fd(fd);
  close(fd);
  return text;
}

}  // namespace flopline::capture
