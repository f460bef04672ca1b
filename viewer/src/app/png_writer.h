// Writes 8-bit RGBA pixels to a PNG file with libpng. The screenshot mode's output.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace flopline::viewer {

// `rgba` holds width*height*4 bytes, rows top to bottom. Returns "" on success, else
// why the file could not be written.
std::string write_png_rgba(const std::string& path, int width, int height,
                           std::span<const std::uint8_t> rgba);

}  // namespace flopline::viewer
