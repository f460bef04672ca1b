#include "png_writer.h"

#include <png.h>

#include <string_view>
#include <vector>

#include "flopline/trace/atomic_file.h"

namespace flopline::viewer {
namespace {

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

// The file behind libpng: a failed write ends the image with libpng's error path.
void write_to_file(png_structp png, png_bytep data, png_size_t n) {
  auto* file = static_cast<trace::AtomicFileWriter*>(png_get_io_ptr(png));
  if (!file->write(std::string_view(reinterpret_cast<const char*>(data), n))) {
    png_error(png, file->error().c_str());
  }
}

void flush_nothing(png_structp) {}

}  // namespace

std::string write_png_rgba(const std::string& path, int width, int height,
                           std::span<const std::uint8_t> rgba) {
  if (width <= 0 || height <= 0 ||
      rgba.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4) {
    return "bad image size";
  }
  // Written under a temporary name and renamed once whole: a failed write leaves no
  // partial PNG, and an old file of that name stays until the new one is complete.
  trace::AtomicFileWriter file;
  if (!file.open(path, false, 0)) return path + ": " + file.error();

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
  png_set_write_fn(png, &file, write_to_file, flush_nothing);
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
  if (!file.commit()) return path + ": " + file.error();
  return "";
}

}  // namespace flopline::viewer
