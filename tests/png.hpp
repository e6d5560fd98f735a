// tests/png.hpp — decodes the PNGs the tests make (libpng's simplified reader), so a test
// checks a picture's size and what it shows instead of its byte count.
#pragma once

#include <png.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace starwave::test {

struct Picture {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // row-major, 3 bytes per pixel

  unsigned pixel(int x, int y) const {
    const unsigned char* p = &rgb[(std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3];
    return unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2];
  }
  /// Distinct colours in rows [y0, y1).
  std::size_t colours(int y0, int y1) const {
    std::set<unsigned> seen;
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < width; ++x) seen.insert(pixel(x, y));
    return seen.size();
  }
};

/// The picture in `path` as 8-bit RGB; throws std::runtime_error if it is not a PNG.
inline Picture read_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) throw std::runtime_error(path + ": not a PNG");
  image.format = PNG_FORMAT_RGB;
  Picture p;
  p.width = int(image.width);
  p.height = int(image.height);
  p.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, p.rgb.data(), 0, nullptr)) {
    png_image_free(&image);
    throw std::runtime_error(path + ": a damaged PNG");
  }
  return p;
}

/// The height write_png gives a section of `rows` × `cols` cells drawn `width` pixels wide:
/// the cells, a gap and the colour bar (src/figures.cpp).
inline int section_height(int rows, int cols, int width) {
  const int scale = width / cols, bar = width / 40 > 12 ? width / 40 : 12;
  return rows * scale + bar / 2 + bar;
}

}  // namespace starwave::test
