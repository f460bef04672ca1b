// Kernel names as people wrote them: CUPTI reports C++ kernels by their mangled name.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "capture/decode_context.h"

namespace flopline::capture::detail {

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

}  // namespace flopline::capture::detail
