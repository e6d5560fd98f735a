#include "src/figures.hpp"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "src/error.hpp"
#include "src/files.hpp"

namespace starwave::figures {
namespace {

struct Rgb {
  unsigned char r, g, b;
};

Rgb lerp(const Rgb* stops, int n, double t) {
  if (!(t == t)) t = 0.5;  // NaN (a value the reader let through): the scale's middle, never an index
  t = std::clamp(t, 0.0, 1.0) * (n - 1);
  const int i = std::min(int(t), n - 2);
  const double f = t - i;
  auto mix = [&](unsigned char a, unsigned char b) { return (unsigned char)std::lround(a + f * (b - a)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

Rgb colour(Colormap c, double t) {
  // Velocity: a perceptually ordered dark-blue → teal → yellow ramp (viridis-like).
  static const Rgb velocity[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  // Seismic: black for negative, white for positive amplitude through grey.
  static const Rgb seismic[] = {{0, 0, 0}, {128, 128, 128}, {255, 255, 255}};
  return c == Colormap::Velocity ? lerp(velocity, 5, t) : lerp(seismic, 3, t);
}

/// libpng reports an error by calling this, which must not return: the message is kept
/// for ours and control goes back to write_rgb's setjmp. Warnings are dropped (libpng
/// would print them on stderr; a picture's warning is not the user's business).
struct PngFailure {
  char message[256] = "unknown error";
};
extern "C" void on_png_error(png_structp png, png_const_charp message) {
  auto* failure = static_cast<PngFailure*>(png_get_error_ptr(png));
  std::snprintf(failure->message, sizeof failure->message, "%s", message ? message : "unknown error");
  png_longjmp(png, 1);
}
extern "C" void on_png_warning(png_structp, png_const_charp) {}

/// Writes RGB pixels (row-major, 3 bytes each) as a PNG, atomically (temporary + rename).
void write_rgb(const std::string& path, int width, int height, std::vector<unsigned char>& pixels) {
  files::Temporary tmp(path);
  FILE* f = std::fopen(tmp.path().c_str(), "wb");
  if (!f) throw InputError(path + ": cannot create the picture: " + files::os_cause(errno));
  PngFailure failure;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, on_png_error, on_png_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    const int err = errno;
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    throw RuntimeError(path + ": cannot write the picture: " +
                       (err == ENOSPC || err == EDQUOT || err == EFBIG ? files::os_cause(err) : failure.message));
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, png_uint_32(width), png_uint_32(height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) png_write_row(png, &pixels[std::size_t(y) * width * 3]);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(f) != 0 || std::ferror(f)) {
    const int err = errno;
    std::fclose(f);
    throw RuntimeError(path + ": cannot write the picture: " + files::os_cause(err));
  }
  if (std::fclose(f) != 0) throw RuntimeError(path + ": cannot write the picture: " + files::os_cause(errno));
  tmp.commit();
}

}  // namespace

double clip_amplitude(const std::vector<float>& values, double clip) {
  std::vector<float> mag;
  mag.reserve(values.size());
  for (float v : values)
    if (!std::isnan(v)) mag.push_back(std::abs(v));  // NaN: the blank between panels
  if (mag.empty()) return 1.0;
  const std::size_t k = std::min(mag.size() - 1, std::size_t(clip * double(mag.size())));
  std::nth_element(mag.begin(), mag.begin() + long(k), mag.end());
  return mag[k] > 0 ? mag[k] : 1.0;
}

void write_png(const std::string& path, const Image2D& img, Colormap cmap, double lo, double hi, int min_width) {
  if (img.rows <= 0 || img.cols <= 0) throw InputError(path + ": nothing to draw (empty array)");
  const int scale = std::max(1, (min_width + img.cols - 1) / img.cols);
  const int width = img.cols * scale;
  const int bar = std::max(12, width / 40), gap = bar / 2;
  const int height = img.rows * scale + gap + bar;
  const double span = hi > lo ? hi - lo : 1.0;

  std::vector<unsigned char> pixels(std::size_t(width) * height * 3, 255);
  for (int y = 0; y < img.rows * scale; ++y)
    for (int x = 0; x < width; ++x) {
      const float v = img.values[std::size_t(y / scale) * img.cols + x / scale];
      if (std::isnan(v)) continue;  // blank (white): the gaps between the panels of a 3-D picture
      const Rgb c = colour(cmap, (v - lo) / span);
      unsigned char* p = &pixels[(std::size_t(y) * width + x) * 3];
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }
  for (int y = img.rows * scale + gap; y < height; ++y)  // colour bar, lo at the left
    for (int x = 0; x < width; ++x) {
      const Rgb c = colour(cmap, double(x) / (width - 1));
      unsigned char* p = &pixels[(std::size_t(y) * width + x) * 3];
      p[0] = c.r, p[1] = c.g, p[2] = c.b;
    }

  write_rgb(path, width, height, pixels);
}

void plot_model(const std::string& path, const Image2D& vp, double lo, double hi) {
  if (!(hi > lo)) {
    lo = INFINITY;
    hi = -INFINITY;
    for (float v : vp.values)
      if (!std::isnan(v)) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
  }
  write_png(path, vp, Colormap::Velocity, lo, hi);
}

void plot_gather(const std::string& path, const Image2D& traces, double clip, double amplitude) {
  // Transpose (nrec, nt) → (nt, nrec) so time runs downwards, keeping every `step`-th
  // sample so the picture is at most about 1.5 times taller than wide.
  const int step = std::max(1, int(std::ceil(traces.cols / (1.5 * traces.rows))));
  Image2D t;
  t.rows = (traces.cols + step - 1) / step;
  t.cols = traces.rows;
  t.values.resize(std::size_t(t.rows) * t.cols);
  for (int r = 0; r < traces.rows; ++r)
    for (int n = 0; n < t.rows; ++n)
      t.values[std::size_t(n) * t.cols + r] = traces.values[std::size_t(r) * traces.cols + std::size_t(n) * step];
  const double a = amplitude > 0 ? amplitude : clip_amplitude(t.values, clip);
  write_png(path, t, Colormap::Seismic, -a, a, 800);
}

Image2D gather_lines(const Image2D& traces, const std::vector<int>& line) {
  const int gap = std::max(2, traces.rows / 100);
  int breaks = 0;
  for (std::size_t r = 1; r < line.size(); ++r) breaks += line[r] != line[r - 1] ? 1 : 0;
  Image2D out;
  out.rows = traces.rows + breaks * gap;
  out.cols = traces.cols;
  out.values.assign(std::size_t(out.rows) * out.cols, NAN);
  int row = 0;
  for (int r = 0; r < traces.rows; ++r) {
    if (r > 0 && line[std::size_t(r)] != line[std::size_t(r) - 1]) row += gap;
    std::copy_n(traces.values.begin() + long(r) * traces.cols, traces.cols, out.values.begin() + long(row) * out.cols);
    ++row;
  }
  return out;
}

void plot_section(const std::string& path, const Image2D& img, double clip) {
  const double a = clip_amplitude(img.values, clip);
  write_png(path, img, Colormap::Seismic, -a, a, 800);
}

Image2D three_slices(const std::vector<float>& v, int nz, int ny, int nx, int iz, int iy, int ix) {
  const int gap = std::max(2, (nx + ny) / 40);
  Image2D out;
  out.rows = std::max(nz, ny);
  out.cols = nx + gap + ny + gap + nx;
  out.values.assign(std::size_t(out.rows) * out.cols, NAN);
  auto at = [&](int z, int y, int x) { return v[(std::size_t(z) * ny + y) * nx + x]; };
  auto put = [&](int r, int c, float value) { out.values[std::size_t(r) * out.cols + c] = value; };
  for (int z = 0; z < nz; ++z) {
    for (int x = 0; x < nx; ++x) put(z, x, at(z, iy, x));             // section (z, x) at row iy
    for (int y = 0; y < ny; ++y) put(z, nx + gap + y, at(z, y, ix));  // section (z, y) at column ix
  }
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) put(y, nx + gap + ny + gap + x, at(iz, y, x));  // plan (y, x) at depth iz
  return out;
}

void plot_curve(const std::string& path, const std::vector<double>& values, bool log_scale) {
  const int width = 800, height = 400, margin = 30;
  std::vector<unsigned char> pixels(std::size_t(width) * height * 3, 255);
  auto put = [&](int x, int y, unsigned char v) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    unsigned char* p = &pixels[(std::size_t(y) * width + x) * 3];
    p[0] = p[1] = p[2] = v;
  };
  for (int x = margin; x <= width - margin; ++x) put(x, height - margin, 0), put(x, margin, 160);
  for (int y = margin; y <= height - margin; ++y) put(margin, y, 0), put(width - margin, y, 160);
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x) && (!log_scale || x > 0)) v.push_back(log_scale ? std::log10(x) : x);
  if (v.size() >= 2) {
    const auto mm = std::minmax_element(v.begin(), v.end());
    const double lo = *mm.first, span = *mm.second > lo ? *mm.second - lo : 1.0;
    auto px = [&](double i) { return margin + (width - 2 * margin) * i / double(v.size() - 1); };
    auto py = [&](double y) { return height - margin - (height - 2 * margin) * (y - lo) / span; };
    for (std::size_t i = 0; i + 1 < v.size(); ++i)
      for (int k = 0; k <= 200; ++k) {  // the segment, densely sampled, 2 pixels thick
        const double t = k / 200.0;
        const int x = int(std::lround(px(double(i) + t))), y = int(std::lround(py(v[i] + t * (v[i + 1] - v[i]))));
        put(x, y, 0), put(x, y + 1, 0);
      }
    for (std::size_t i = 0; i < v.size(); ++i)  // a dot per value
      for (int dx = -2; dx <= 2; ++dx)
        for (int dy = -2; dy <= 2; ++dy) put(int(std::lround(px(double(i)))) + dx, int(std::lround(py(v[i]))) + dy, 0);
  }
  write_rgb(path, width, height, pixels);
}

Folder::Folder(const std::string& dir, const std::string& option, const std::vector<std::string>& names, bool overwrite,
               const std::vector<std::string>& inputs, bool active)
    : dir_(dir), active_(active) {
  if (!active_) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path d(dir);
  const fs::path parent = d.has_parent_path() ? d.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw InputError(option + ": " + dir + ": the folder " + parent.string() + " it goes in does not exist");
  if (fs::exists(d, ec) && !fs::is_directory(d, ec)) throw InputError(option + ": " + dir + " is a file, not a folder");
  for (const std::string& name : names) {  // a user's own file is replaced only when asked
    const std::string p = (d / name).string();
    files::refuse_input_as_output(p, option, inputs);
    if (fs::exists(p, ec) && !overwrite)
      throw InputError(p + ": exists already; pass --overwrite to replace it, or choose another " + option + " folder");
  }
}

void Folder::create() {
  if (!active_) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    if (!fs::create_directory(dir_, ec))
      throw InputError(dir_ + ": cannot create the figures folder: " + files::os_cause(ec.value()));
    made_ = true;
  }
}

std::string Folder::file(const std::string& name) {
  drawn_.insert(name);
  return (std::filesystem::path(dir_) / name).string();
}

Folder::~Folder() {
  if (!active_ || kept_) return;
  std::error_code ec;
  for (const std::string& name : drawn_) std::filesystem::remove(std::filesystem::path(dir_) / name, ec);
  if (made_) std::filesystem::remove(dir_, ec);  // only if empty: nothing of the user's goes
}

}  // namespace starwave::figures
