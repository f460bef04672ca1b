// libFuzzer entry for the Chrome-trace reader: any bytes must give either a model
// or an error with a position, never a crash, a hang or unbounded memory. The
// model's invariants are checked too, since a wrong count is also a bug.
//
// The first byte is not text: it picks how the rest reaches the reader, so the file
// level is fuzzed too (gzip members, damage, streams, files cut while mapped):
//   bit 0      a parsing thread or not (in-memory text)
//   bits 1-2   0: text in memory; 1: a file (mapped, or inflated when it is gzip);
//              2: a pipe read as a stream (gzip too); 3: a file mapped, then cut to
//              (bits 3-7)/32 of its size before it is parsed
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"
#include "trace/chrome_reader_impl.h"
#include "trace/file_io.h"

namespace {

using namespace flopline::trace;

// Inflated or streamed text is held in memory: keep it within the fuzzer's RSS limit.
constexpr std::uint64_t kMaxText = 4u << 20;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_result(const ReadResult& r, std::size_t text_size) {
  if (!r.ok()) {
    check(!r.error->reason.empty());
    check(r.error->offset <= text_size);
    return;
  }
  const TraceReport& rep = r.trace.report;
  check(rep.events_loaded + rep.events_metadata + rep.events_skipped == rep.events_total);
  check(rep.text_bytes_unread * 2 <= rep.text_bytes);
  for (const Track& t : r.trace.tracks) {
    check(t.process < r.trace.processes.size());
    for (std::size_t row = 0; row < t.rows.size(); ++row) {
      for (std::size_t i = 0; i < t.rows[row].size(); ++i) {
        const Slice& s = t.rows[row][i];
        check(s.dur >= 0);
        TimeNs end;
        check(!__builtin_add_overflow(s.start, s.dur, &end));
        if (i > 0) check(t.rows[row][i - 1].end() <= s.start);
        if (s.args != kNoArgs) {
          // Stored args are objects the lazy accessors can walk.
          (void)json_members(r.trace.args.json(s.args));
        }
      }
    }
  }
  for (const Flow& f : r.trace.flows) {
    check(f.from.track < r.trace.tracks.size() && f.to.track < r.trace.tracks.size());
  }
}

// An in-memory file with `bytes`, as a path the reader opens.
struct MemFile {
  int fd = -1;
  std::string path;
  explicit MemFile(std::string_view bytes) {
    fd = memfd_create("fuzz.json", MFD_CLOEXEC);
    check(fd >= 0);
    check(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemFile() { ::close(fd); }
};

void read_through_pipe(std::string_view bytes) {
  int p[2];
  check(::pipe2(p, O_CLOEXEC) == 0);
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(p[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;  // the reader stopped early and closed its end
      done += static_cast<std::size_t>(n);
    }
    ::close(p[1]);
  });
  ReadOptions opt;
  opt.max_text_bytes = kMaxText;
  const ReadResult r = read_chrome_trace_file("/proc/self/fd/" + std::to_string(p[0]), opt);
  ::close(p[0]);
  writer.join();
  check_result(r, std::max<std::size_t>(kMaxText, bytes.size()));
}

void read_cut_while_mapped(std::string_view bytes, unsigned eighths) {
  MemFile f(bytes);
  FileText text;
  InputOptions opt;
  opt.max_text_bytes = kMaxText;
  std::string error;
  if (!read_file_text(f.path, opt, text, error)) return;
  const std::size_t size = text.text().size();
  check(::ftruncate(f.fd, static_cast<off_t>(bytes.size() * eighths / 32)) == 0);
  check_result(chrome::read_text(text.text(), "fuzz.json", {}, chrome::Threading::kNever), size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const bool pipes_ok = signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  check(pipes_ok);
  const std::uint8_t how = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  switch ((how >> 1) & 3) {
    case 0: {
      const auto threading = how & 1 ? chrome::Threading::kAlways : chrome::Threading::kNever;
      check_result(chrome::read_text(bytes, "fuzz.json", {}, threading), bytes.size());
      break;
    }
    case 1: {
      MemFile f(bytes);
      ReadOptions opt;
      opt.max_text_bytes = kMaxText;
      const ReadResult r = read_chrome_trace_file(f.path, opt);
      check_result(r, std::max<std::size_t>(kMaxText, bytes.size()));
      break;
    }
    case 2:
      read_through_pipe(bytes);
      break;
    case 3:
      read_cut_while_mapped(bytes, how >> 3);
      break;
  }
  return 0;
}
