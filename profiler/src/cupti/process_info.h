// Names of this process and its threads, read from /proc, for the trace's metadata.
#pragma once

#include <cstdint>
#include <string>

namespace flopline::cupti {

// "python3": the executable's base name (/proc/self/comm), "" when unreadable.
std::string process_name();
// The command line, arguments separated by blanks (/proc/self/cmdline), "" when unreadable.
std::string process_command_line();
// This machine's host name (gethostname), "" when unreadable: which host a rank ran on.
std::string host_name();
// The name of thread `tid` of this process (/proc/self/task/TID/comm); "" once the
// thread has exited.
std::string thread_name(std::uint32_t tid);

}  // namespace flopline::cupti
