#include "trace/text_buffer.h"

#include <algorithm>
#include <cstdint>

namespace flopline::trace {

TextBuffer& TextBuffer::operator=(TextBuffer&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    data_ = o.data_;
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  return *this;
}

bool TextBuffer::reserve_more(std::size_t n) {
  if (room() >= n) return true;
  if (n > SIZE_MAX / 2 - size_) return false;
  const std::size_t want = std::max(size_ + n, std::max<std::size_t>(capacity_ * 2, 64 << 10));
  void* p = std::realloc(data_, want);
  if (p == nullptr) return false;
  data_ = static_cast<char*>(p);
  capacity_ = want;
  return true;
}

}  // namespace flopline::trace
