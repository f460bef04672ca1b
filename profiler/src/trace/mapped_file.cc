#include "trace/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace flopline::trace {
namespace {

// The mappings the SIGBUS handler may repair. Fixed size and lock-free: the handler
// can take no lock. A slot is claimed by setting `begin`, published by `length`.
struct Guarded {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::size_t> length{0};  // page-rounded
  std::atomic<bool> faulted{false};
};
constexpr int kSlots = 64;
Guarded g_slots[kSlots];
std::size_t g_page = 4096;
struct sigaction g_previous {};
std::once_flag g_installed;
bool g_install_ok = false;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Guarded& g : g_slots) {
    const std::uintptr_t begin = g.begin.load(std::memory_order_acquire);
    const std::size_t length = g.length.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr - begin >= length) continue;
    // Zero pages from the faulting one to the end: the access is retried on return.
    const std::uintptr_t page = addr & ~(g_page - 1);
    void* p = mmap(reinterpret_cast<void*>(page), begin + length - page, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      g.faulted.store(true, std::memory_order_release);
      return;
    }
  }
  // Not ours: what was there before.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) {
      g_previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  // The default action: a real fault repeats on return and kills the process then.
  signal(SIGBUS, SIG_DFL);
  if (info->si_code <= 0) raise(SIGBUS);  // sent by kill(), not a fault
}

void install() {
  g_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  g_install_ok = sigaction(SIGBUS, &action, &g_previous) == 0;
}

int claim_slot(std::uintptr_t begin, std::size_t length) {
  for (int i = 0; i < kSlots; ++i) {
    std::uintptr_t expected = 0;
    if (g_slots[i].begin.compare_exchange_strong(expected, begin, std::memory_order_acq_rel)) {
      g_slots[i].faulted.store(false, std::memory_order_relaxed);
      g_slots[i].length.store(length, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void release_slot(int i) {
  g_slots[i].length.store(0, std::memory_order_release);
  g_slots[i].begin.store(0, std::memory_order_release);
}

}  // namespace

bool MappedFile::map(int fd, std::size_t size) {
  if (size == 0) return false;
  std::call_once(g_installed, install);
  if (!g_install_ok) return false;
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return false;
  const std::size_t rounded = (size + g_page - 1) & ~(g_page - 1);
  const int slot = claim_slot(reinterpret_cast<std::uintptr_t>(p), rounded);
  if (slot < 0) {
    munmap(p, size);
    return false;
  }
  data_ = p;
  size_ = size;
  slot_ = slot;
  madvise(data_, size_, MADV_SEQUENTIAL);
  return true;
}

bool MappedFile::lost_pages() const {
  return slot_ >= 0 && g_slots[slot_].faulted.load(std::memory_order_acquire);
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  release_slot(slot_);
  munmap(data_, size_);
}

}  // namespace flopline::trace
