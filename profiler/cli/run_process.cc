#include "run_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "run_command.h"

// The install's library folder relative to its prefix (CMake's CMAKE_INSTALL_LIBDIR).
#ifndef FLOPLINE_INSTALL_LIBDIR
#define FLOPLINE_INSTALL_LIBDIR "lib"
#endif

namespace flopline::cli {
namespace {

volatile sig_atomic_t g_child = 0;

void forward_to_child(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> resolve_command(const std::string& name, const std::string& path_var) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (stat(name.c_str(), &st) != 0) return std::nullopt;
    return name;  // exists; execve says why if it cannot run it
  }
  std::size_t pos = 0;
  while (pos <= path_var.size()) {
    std::size_t colon = path_var.find(':', pos);
    if (colon == std::string::npos) colon = path_var.size();
    // An empty entry means the working directory. (Built without assigning a literal to
    // a string: GCC 12 gives a false -Wrestrict warning on that here.)
    const std::string dir = colon > pos ? path_var.substr(pos, colon - pos) : std::string(1, '.');
    pos = colon + 1;
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::optional<std::string> find_injection_library(const std::string& exe_path,
                                                  const char* override_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (override_path != nullptr && *override_path != '\0') {
    if (fs::is_regular_file(override_path, ec)) return fs::absolute(override_path, ec).string();
    return std::nullopt;
  }
  if (exe_path.empty()) return std::nullopt;
  const fs::path dir = fs::path(exe_path).parent_path();
  for (const fs::path& p : {dir / "libflopline_inject.so",
                            dir / ".." / FLOPLINE_INSTALL_LIBDIR / "libflopline_inject.so",
                            dir / ".." / "lib" / "libflopline_inject.so",
                            dir / ".." / "lib64" / "libflopline_inject.so"}) {
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return std::nullopt;
}

int exit_code_from_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGABRT:
      return "SIGABRT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    default:
      return "signal " + std::to_string(sig);
  }
}

ChildResult run_child(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env) {
  ChildResult result;
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // A pipe closed on exec tells the parent whether execve worked, and errno if not.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    result.error = std::strerror(errno);
    result.exit_code = kExitCommandNotExecutable;
    return result;
  }
  // The terminal sends Ctrl-C to the whole foreground group: the child gets it, the
  // parent stays to print the summary.
  struct sigaction ignore {
  }, old_int{}, old_quit{}, forward{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_to_child;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);

  const pid_t pid = fork();
  if (pid == 0) {
    // Ignored signals stay ignored across exec: give the child the defaults back.
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    close(report[0]);
    execve(program.c_str(), argv.data(), envp.data());
    const int e = errno;
    (void)!write(report[1], &e, sizeof e);
    _exit(e == ENOENT ? kExitCommandNotFound : kExitCommandNotExecutable);
  }
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    result.error = std::string("fork: ") + std::strerror(errno);
    result.exit_code = 1;
    return result;
  }
  g_child = pid;
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    result.error = std::strerror(exec_errno);
    // execve says EACCES for a directory; say what it is.
    std::error_code ec;
    if (exec_errno == EACCES && std::filesystem::is_directory(program, ec))
      result.error = "is a directory";
    result.exit_code = exec_errno == ENOENT ? kExitCommandNotFound : kExitCommandNotExecutable;
    return result;
  }
  result.started = true;
  result.exit_code = exit_code_from_wait_status(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace flopline::cli
