#include "flopline/capture/output_manifest.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace flopline::capture {
namespace {

std::vector<ManifestEntry> parse_manifest(std::string_view text) {
  std::vector<ManifestEntry> entries;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();  // a line still being written
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab + 1 == line.size()) continue;
    ManifestEntry e;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + tab, e.pid);
    if (ec != std::errc() || end != line.data() + tab) continue;
    e.path = std::string(line.substr(tab + 1));
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
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::string path_with_pid(std::string_view path, std::int64_t pid) {
  const std::size_t slash = path.rfind('/');
  const std::size_t name_start = slash == std::string_view::npos ? 0 : slash + 1;
  const std::string_view name = path.substr(name_start);
  std::size_t ext = std::string_view::npos;
  for (std::string_view suffix : {".json.gz", ".json", ".gz"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      ext = path.size() - suffix.size();
      break;
    }
  }
  if (ext == std::string_view::npos) ext = path.size();
  std::string out(path.substr(0, ext));
  out += '-';
  out += std::to_string(pid);
  out += path.substr(ext);
  return out;
}

std::string claim_output_path(const std::string& manifest, const std::string& wanted,
                              std::int64_t pid) {
  if (manifest.empty()) return wanted;
  const int fd = open(manifest.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return wanted;
  // The lock makes read-check-append one step for all processes of the run.
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) break;
  }
  std::string chosen = wanted;
  bool noted = false;
  for (const ManifestEntry& e : parse_manifest(read_all(fd))) {
    if (e.path == wanted && e.pid != pid) chosen = path_with_pid(wanted, pid);
  }
  for (const ManifestEntry& e : parse_manifest(read_all(fd))) {
    if (e.path == chosen && e.pid == pid) noted = true;
  }
  if (!noted) write_all(fd, std::to_string(pid) + "\t" + chosen + "\n");
  flock(fd, LOCK_UN);
  close(fd);
  return chosen;
}

std::vector<ManifestEntry> read_manifest(const std::string& manifest) {
  const int fd = open(manifest.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<ManifestEntry> entries = parse_manifest(read_all(fd));
  close(fd);
  return entries;
}

}  // namespace flopline::capture
