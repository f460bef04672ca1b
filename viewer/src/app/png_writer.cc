#include "png_writer.h"

#include <png.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace flopline::viewer {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// libpng reports errors by longjmp; the message is kept for the caller.
struct ErrorSink {
  std::string message;
};

[[noreturn]] void on_png_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<ErrorSink*>(png_get_error_ptr(png));
  if (sink) sink->message = msg;
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

}  // namespace

std::string write_png_rgba(const std::string& path, int width, int height,
                           std::span<const std::uint8_t> rgba) {
  if (width <= 0 || height <= 0 ||
      rgba.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4) {
    return "bad image size";
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) return path + ": " + std::strerror(errno);

  ErrorSink sink;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, on_png_error, on_png_warning);
  if (!png) return "libpng: out of memory";
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    return "libpng: out of memory";
  }
  // Row pointers live outside the setjmp scope so a longjmp leaks nothing.
  std::vector<png_const_bytep> rows(static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y)
    rows[static_cast<std::size_t>(y)] =
        rgba.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 4;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return path + ": " + (sink.message.empty() ? std::string("libpng error") : sink.message);
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // Screenshots are flat UI colours: no filter and fast compression are small enough,
  // and keep writing a 1600x900 image well under a frame's time.
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_compression_level(png, 3);
  png_write_info(png, info);
  png_write_rows(png, const_cast<png_bytepp>(rows.data()), static_cast<png_uint_32>(height));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(file.get()) != 0) return path + ": " + std::strerror(errno);
  return "";
}

}  // namespace flopline::viewer
