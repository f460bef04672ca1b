// A framebuffer object of a fixed size that a frame can be rendered into and read
// back: screenshots do not depend on the window being mapped or on the screen size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flopline::viewer {

class OffscreenTarget {
 public:
  OffscreenTarget() = default;
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  // Needs a current GL context. Returns "" or why it failed.
  std::string create(int width, int height);
  void bind() const;
  static void unbind();
  // RGBA rows, top to bottom (GL reads bottom to top; rows are flipped here).
  std::vector<std::uint8_t> read_rgba() const;
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  unsigned fbo_ = 0;
  unsigned color_ = 0;
  int width_ = 0;
  int height_ = 0;
};

// RGBA rows, top to bottom, of the window's back buffer (what the next swap shows).
std::vector<std::uint8_t> read_back_buffer_rgba(int width, int height);

}  // namespace flopline::viewer
