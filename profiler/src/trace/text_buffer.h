// A byte buffer for text that arrives in pieces (a pipe, a device, inflated gzip).
//
// It grows only as bytes arrive, never from what a file claims about itself, and it
// grows with realloc: for large blocks glibc moves pages with mremap instead of
// copying, so a multi-GB text never needs twice its size while it grows. Running out
// of memory is a false return the caller turns into an error naming the file.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string_view>

namespace flopline::trace {

class TextBuffer {
 public:
  TextBuffer() = default;
  ~TextBuffer() { std::free(data_); }
  TextBuffer(TextBuffer&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  TextBuffer& operator=(TextBuffer&& o) noexcept;
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;

  // Makes room for at least `n` more bytes (at least doubling the capacity, so
  // appending is amortised O(1)). False when the memory cannot be had.
  bool reserve_more(std::size_t n);
  char* tail() { return data_ + size_; }  // where the next bytes go
  std::size_t room() const { return capacity_ - size_; }
  void grew_by(std::size_t n) { size_ += n; }  // n <= room(): bytes written at tail()
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace flopline::trace
