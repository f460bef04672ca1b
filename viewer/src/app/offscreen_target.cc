#include "offscreen_target.h"

#include <cstring>

#include "gl_includes.h"

namespace flopline::viewer {

OffscreenTarget::~OffscreenTarget() {
  if (color_) glDeleteRenderbuffers(1, &color_);
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
}

std::string OffscreenTarget::create(int width, int height) {
  width_ = width;
  height_ = height;
  glGenFramebuffers(1, &fbo_);
  glGenRenderbuffers(1, &color_);
  glBindRenderbuffer(GL_RENDERBUFFER, color_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    return "offscreen framebuffer " + std::to_string(width) + "x" + std::to_string(height) +
           " is incomplete (status " + std::to_string(status) + ")";
  }
  return "";
}

void OffscreenTarget::bind() const {
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
}

void OffscreenTarget::unbind() {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

namespace {

// Reads the bound read framebuffer; GL's rows run bottom to top, so they are flipped.
std::vector<std::uint8_t> read_bound_rgba(int width_, int height_) {
  const std::size_t row = static_cast<std::size_t>(width_) * 4;
  std::vector<std::uint8_t> pixels(row * static_cast<std::size_t>(height_));
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // Blending leaves partial alpha where windows were drawn; a screenshot is opaque.
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;
  std::vector<std::uint8_t> row_tmp(row);
  for (int y = 0; y < height_ / 2; ++y) {
    std::uint8_t* a = pixels.data() + static_cast<std::size_t>(y) * row;
    std::uint8_t* b = pixels.data() + static_cast<std::size_t>(height_ - 1 - y) * row;
    std::memcpy(row_tmp.data(), a, row);
    std::memcpy(a, b, row);
    std::memcpy(b, row_tmp.data(), row);
  }
  return pixels;
}

}  // namespace

std::vector<std::uint8_t> OffscreenTarget::read_rgba() const {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  std::vector<std::uint8_t> pixels = read_bound_rgba(width_, height_);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  return pixels;
}

std::vector<std::uint8_t> read_back_buffer_rgba(int width, int height) {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  glReadBuffer(GL_BACK);
  return read_bound_rgba(width, height);
}

}  // namespace flopline::viewer
