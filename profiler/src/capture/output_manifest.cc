#include "flopline/capture/output_manifest.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace flopline::capture {
namespace {

bool is_state(char c) {
  return c == 'C' || c == 'W' || c == 'F' || c == 'P';
}

// Tabs and newlines would break a line apart.
std::string one_field(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '\t', ' ');
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

std::vector<ManifestEntry> parse_manifest(std::string_view text) {
  std::vector<ManifestEntry> entries;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a line still being written
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.size() < 2 || !is_state(line[0]) || line[1] != '\t') continue;
    ManifestEntry e;
    e.state = static_cast<ManifestState>(line[0]);
    line.remove_prefix(2);
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + tab, e.pid);
    if (ec != std::errc() || end != line.data() + tab) continue;
    line.remove_prefix(tab + 1);
    const std::size_t tab2 = line.find('\t');
    e.path = std::string(line.substr(0, tab2));
    if (e.path.empty()) continue;
    if (tab2 != std::string_view::npos) e.detail = std::string(line.substr(tab2 + 1));
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  if (lseek(fd, 0, SEEK_SET) < 0) return text;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
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

// Runs `f(fd, notes so far)` with the manifest locked; false when it cannot be opened.
template <class F>
bool with_manifest(const std::string& manifest, F f) {
  if (manifest.empty()) return false;
  const int fd = open(manifest.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) break;
  }
  f(fd, parse_manifest(read_all(fd)));
  flock(fd, LOCK_UN);
  close(fd);
  return true;
}

std::string line(ManifestState state, std::int64_t pid, const std::string& path,
                 std::string_view detail) {
  std::string s(1, static_cast<char>(state));
  s += '\t';
  s += std::to_string(pid);
  s += '\t';
  s += one_field(path);
  s += '\t';
  s += one_field(detail);
  s += '\n';
  return s;
}

void note(const std::string& manifest, ManifestState state, std::int64_t pid,
          const std::string& path, std::string_view detail) {
  with_manifest(manifest, [&](int fd, const std::vector<ManifestEntry>&) {
    write_all(fd, line(state, pid, path, detail));
  });
}

}  // namespace

std::string path_with_suffix(std::string_view path, std::string_view suffix) {
  const std::size_t slash = path.rfind('/');
  const std::size_t name_start = slash == std::string_view::npos ? 0 : slash + 1;
  const std::string_view name = path.substr(name_start);
  std::size_t ext = std::string_view::npos;
  for (std::string_view e : {".json.gz", ".json", ".gz"}) {
    if (name.size() > e.size() && name.ends_with(e)) {
      ext = path.size() - e.size();
      break;
    }
  }
  if (ext == std::string_view::npos) ext = path.size();
  std::string out(path.substr(0, ext));
  out += '-';
  out += suffix;
  out += path.substr(ext);
  return out;
}

std::string path_with_pid(std::string_view path, std::int64_t pid) {
  return path_with_suffix(path, std::to_string(pid));
}

std::string claim_output_path(const std::string& manifest, const std::string& wanted,
                              std::int64_t pid) {
  std::string chosen = wanted;
  with_manifest(manifest, [&](int fd, const std::vector<ManifestEntry>& notes) {
    for (const ManifestEntry& e : notes) {
      if (e.path == wanted && e.pid != pid) chosen = path_with_pid(wanted, pid);
    }
    const bool noted = std::any_of(notes.begin(), notes.end(), [&](const ManifestEntry& e) {
      return e.state == ManifestState::kClaimed && e.path == chosen && e.pid == pid;
    });
    if (!noted) write_all(fd, line(ManifestState::kClaimed, pid, chosen, {}));
  });
  return chosen;
}

void note_written(const std::string& manifest, std::int64_t pid, const std::string& path,
                  std::string_view detail) {
  note(manifest, ManifestState::kWritten, pid, path, detail);
}

void note_failed(const std::string& manifest, std::int64_t pid, const std::string& path,
                 std::string_view reason) {
  note(manifest, ManifestState::kFailed, pid, path, reason);
}

void note_partial(const std::string& manifest, std::int64_t pid, const std::string& path,
                  std::string_view detail) {
  note(manifest, ManifestState::kPartial, pid, path, detail);
}

std::vector<ManifestEntry> read_manifest(const std::string& manifest) {
  const int fd = open(manifest.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<ManifestEntry> entries = parse_manifest(read_all(fd));
  close(fd);
  return entries;
}

std::vector<ManifestEntry> run_files(const std::vector<ManifestEntry>& notes) {
  std::vector<ManifestEntry> out;
  for (const ManifestEntry& e : notes) {
    if (e.state == ManifestState::kClaimed) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const ManifestEntry& o) { return o.path == e.path; });
    if (it == out.end()) {
      out.push_back(e);
    } else if (it->state != ManifestState::kWritten || e.state == ManifestState::kWritten) {
      *it = e;  // a later note wins, but a partial flush never hides a finished write
    }
  }
  return out;
}

}  // namespace flopline::capture
