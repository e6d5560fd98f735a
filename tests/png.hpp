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

/// The panels of a figure, by their frames (src/plot/figures.cpp draws each panel framed in
/// black): dark runs of at least `min_width` pixels along a row with white above them (a
/// frame's top edge) and dark pixels 40 rows below both ends (its sides); the most on one
/// row. The colour bar is narrower; text and the data inside make no such frame.
inline int panels(const Picture& p, int min_width = 30) {
  auto dark = [&](int x, int y) {
    const unsigned c = p.pixel(x, y);
    return ((c >> 16) & 255) < 60 && ((c >> 8) & 255) < 60 && (c & 255) < 60;
  };
  int most = 0;
  for (int y = 1; y + 40 < p.height; ++y) {
    int frames = 0, run = 0;
    for (int x = 0; x <= p.width; ++x) {
      if (x < p.width && dark(x, y)) {
        ++run;
        continue;
      }
      const int a = x - run, b = x - 1;
      if (run >= min_width && p.pixel((a + b) / 2, y - 1) == 0xFFFFFFu && dark(a, y + 40) && dark(b, y + 40)) ++frames;
      run = 0;
    }
    most = frames > most ? frames : most;
  }
  return most;
}

/// Pixels of colour `rgb` in the picture.
inline long count_colour(const Picture& p, unsigned rgb) {
  long n = 0;
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) n += p.pixel(x, y) == rgb ? 1 : 0;
  return n;
}

/// Dark pixels (text, frames, ticks) in rows [y0, y1).
inline long dark_rows(const Picture& p, int y0, int y1) {
  long n = 0;
  for (int y = y0; y < y1 && y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      const unsigned c = p.pixel(x, y);
      n += ((c >> 16) & 255) < 90 && ((c >> 8) & 255) < 90 && (c & 255) < 90 ? 1 : 0;
    }
  return n;
}

}  // namespace starwave::test
