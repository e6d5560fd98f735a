#include "src/plot/figures.hpp"

#include <cairo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "src/base/error.hpp"
#include "src/safety/outputs.hpp"
#include "src/safety/signals.hpp"

namespace starwave::figures {
namespace {

struct Rgb {
  double r, g, b;  // 0…255
};

Rgb lerp(const Rgb* stops, int n, double t) {
  if (!(t == t)) t = 0.5;  // NaN (a value the reader let through): the scale's middle, never an index
  t = std::clamp(t, 0.0, 1.0) * (n - 1);
  const int i = std::min(int(t), n - 2);
  const double f = t - i;
  return {stops[i].r + f * (stops[i + 1].r - stops[i].r), stops[i].g + f * (stops[i + 1].g - stops[i].g),
          stops[i].b + f * (stops[i + 1].b - stops[i].b)};
}

Rgb colour(Colormap c, double t) {
  // Velocity: a perceptually ordered dark-blue → teal → yellow ramp (viridis-like).
  static const Rgb velocity[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  // Seismic: black for negative, white for positive amplitude through grey.
  static const Rgb seismic[] = {{0, 0, 0}, {128, 128, 128}, {255, 255, 255}};
  return c == Colormap::Velocity ? lerp(velocity, 5, t) : lerp(seismic, 3, t);
}

unsigned pack(const Rgb& c) {
  auto b = [](double v) { return unsigned(std::lround(std::clamp(v, 0.0, 255.0))); };
  return (b(c.r) << 16) | (b(c.g) << 8) | b(c.b);
}

/// Tick values: multiples of 1, 2 or 5 × 10^k inside [a, b], about `target` of them.
std::vector<double> nice_ticks(double a, double b, int target) {
  if (!(b > a) || !std::isfinite(a) || !std::isfinite(b)) return {a};
  const double raw = (b - a) / target, mag = std::pow(10.0, std::floor(std::log10(raw))), f = raw / mag;
  const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  std::vector<double> t;
  for (double k = std::ceil(a / step - 1e-9); k * step <= b + 1e-9 * step; k += 1)
    t.push_back(std::abs(k) < 1e-9 ? 0.0 : k * step);
  return t;
}

std::string number(double v) {
  std::ostringstream os;
  os << std::setprecision(4) << v;
  return os.str();
}

/// `s` with every byte that does not belong to a well-formed UTF-8 sequence replaced by
/// U+FFFD: Cairo draws nothing more on a context once it is given invalid UTF-8, and a
/// title comes from a file name (any bytes on Linux) or --title.
std::string valid_utf8(const std::string& s) {
  std::string out;
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned c = b[i];
    // The sequence's length and the range of its second byte (RFC 3629's table: no
    // overlong forms, no surrogates, nothing above U+10FFFF).
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
      len = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      len = 2;
    else if (c == 0xE0)
      len = 3, lo = 0xA0;
    else if (c == 0xED)
      len = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF)
      len = 3;
    else if (c == 0xF0)
      len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      len = 4;
    else if (c == 0xF4)
      len = 4, hi = 0x8F;
    bool ok = len > 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const unsigned t = b[i + k];
      ok = k == 1 ? t >= lo && t <= hi : t >= 0x80 && t <= 0xBF;
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

/// A Cairo surface and context, written to a PNG atomically.
class Canvas {
 public:
  Canvas(int width, int height)
      : surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)), cr_(cairo_create(surface_)) {
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  ~Canvas() {
    cairo_destroy(cr_);
    cairo_surface_destroy(surface_);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;
  cairo_t* cr() { return cr_; }

  /// Text of `size` px anchored at (x, y): ax, ay ∈ {0, 0.5, 1} place the anchor at the
  /// text's left/centre/right and top/middle/bottom; `angle` turns it (−π/2: upwards).
  void text(const std::string& raw, double x, double y, double size, double ax, double ay, double angle = 0,
            bool bold = false) {
    const std::string s = valid_utf8(raw);
    cairo_save(cr_);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    cairo_translate(cr_, x, y);
    cairo_rotate(cr_, angle);
    cairo_move_to(cr_, -ax * e.x_advance, -ay * size * 0.75 + size * 0.75);
    cairo_set_source_rgb(cr_, 0, 0, 0);
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
  }
  void line(double x0, double y0, double x1, double y1, double width = 1, double grey = 0) {
    cairo_set_source_rgb(cr_, grey, grey, grey);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
  }
  void write(const std::string& path) {
    cairo_surface_flush(surface_);
    if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS)  // a drawing that stopped half-way is no picture
      throw RuntimeError(path + ": cannot draw the picture: " + cairo_status_to_string(cairo_status(cr_)));
    safety::Temporary tmp(path);
    const cairo_status_t st = cairo_surface_write_to_png(surface_, tmp.path().c_str());
    if (st != CAIRO_STATUS_SUCCESS) {
      const int err = errno;
      throw RuntimeError(
          path + ": cannot write the picture: " +
          (st == CAIRO_STATUS_WRITE_ERROR && err != 0 ? os_cause(err) : std::string(cairo_status_to_string(st))));
    }
    tmp.commit();
  }

 private:
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

/// Paints `img` into box b, each value its colour (NaN white), scaled: nearest cell when
/// the cells are enlarged, averaged when many cells share a pixel (long traces).
void paint_image(cairo_t* cr, const Image2D& img, const ColourScale& sc, const Box& b) {
  // Cairo's image surfaces hold at most 32767 pixels a side: longer arrays (a trace of a
  // minute at 1 ms) are decimated to at most 16384 a side, far more than the box shows.
  const int sr = (img.rows + 16383) / 16384, sx = (img.cols + 16383) / 16384;
  const int rows = (img.rows + sr - 1) / sr, cols = (img.cols + sx - 1) / sx;
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, cols, rows);
  const int stride = cairo_image_surface_get_stride(s);
  unsigned char* data = cairo_image_surface_get_data(s);
  const double span = sc.hi > sc.lo ? sc.hi - sc.lo : 1.0;
  for (int r = 0; r < rows; ++r) {
    auto* row = reinterpret_cast<std::uint32_t*>(data + std::size_t(r) * std::size_t(stride));
    for (int c = 0; c < cols; ++c) {
      const float v =
          img.values[std::size_t(r) * std::size_t(sr) * std::size_t(img.cols) + std::size_t(c) * std::size_t(sx)];
      row[c] = std::isnan(v) ? 0xFFFFFFu : pack(colour(sc.map, (v - sc.lo) / span));
    }
  }
  cairo_surface_mark_dirty(s);
  cairo_save(cr);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_clip(cr);
  cairo_translate(cr, b.x, b.y);
  cairo_scale(cr, double(b.w) / cols, double(b.h) / rows);
  cairo_set_source_surface(cr, s, 0, 0);
  const bool enlarged = b.w >= cols && b.h >= rows;
  cairo_pattern_set_filter(cairo_get_source(cr), enlarged ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
  cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(s);
}

/// The ticks of an axis of n cells over `length` px from `start`: (pixel, value) pairs.
std::vector<std::pair<double, double>> axis_ticks(const Axis& a, int n, double start, double length) {
  const double lo = a.origin - 0.5 * a.step, hi = a.origin + (n - 0.5) * a.step;
  std::vector<std::pair<double, double>> out;
  for (double v : nice_ticks(std::min(lo, hi), std::max(lo, hi), std::max(3, int(length / 80))))
    out.emplace_back(std::floor(start + (v - lo) / (hi - lo) * length) + 0.5, v);  // a pixel's centre: crisp
  return out;
}

constexpr double kTitle = 17, kLabel = 13, kTick = 11;

}  // namespace

unsigned colour_of(Colormap map, double t) { return pack(colour(map, t)); }

Axis distance_axis(const std::string& name, double origin, double step, bool km) {
  if (km) return {origin / 1000, step / 1000, name + " (km)"};
  return {origin, step, name + " (m)"};
}

Axis distance_axis(const std::string& name, double origin, double step, int n) {
  return distance_axis(name, origin, step, std::abs(step) * std::max(1, n - 1) >= 5000);
}

double clip_amplitude(const std::vector<float>& values, double clip) {
  std::vector<float> mag;
  mag.reserve(values.size());
  for (float v : values)
    if (!std::isnan(v)) mag.push_back(std::abs(v));  // NaN: blank
  if (mag.empty()) return 1.0;
  const std::size_t k = std::min(mag.size() - 1, std::size_t(clip * double(mag.size())));
  std::nth_element(mag.begin(), mag.begin() + long(k), mag.end());
  return mag[k] > 0 ? mag[k] : 1.0;
}

namespace {

/// Where each panel and the colour bar go: panels drawn to scale share one pixels-per-unit,
/// chosen so that they fill about 900 px across and at most 620 px down; the others share
/// the width left, 560 px tall.
Layout layout_of(const std::vector<Panel>& panels) {
  const double target_w = 900, max_h = 620, free_h = 560;
  double scaled_extent = 0, tallest = 0;
  int free_cols = 0;
  for (const Panel& p : panels) {
    if (p.to_scale) {
      scaled_extent += std::abs(p.across.step) * p.values.cols;
      tallest = std::max(tallest, std::abs(p.down.step) * p.values.rows);
    } else {
      free_cols += p.values.cols;
    }
  }
  double ppu = scaled_extent > 0 ? target_w / scaled_extent : 0;
  if (tallest * ppu > max_h) ppu = max_h / tallest;
  const double free_w = scaled_extent > 0 ? target_w / 2 : target_w;
  // Margins: the title and captions above, tick labels and the axis label below and to the
  // left, the colour bar with its values and label on the right.
  const int left = 78, top = 62, bottom = 58, gap_same = 14, gap_new = 70, right = 140;
  Layout L;
  int x = left, height = 0;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Panel& p = panels[i];
    Box b;
    if (p.to_scale) {
      b.w = std::max(40, int(std::lround(std::abs(p.across.step) * p.values.cols * ppu)));
      b.h = std::max(40, int(std::lround(std::abs(p.down.step) * p.values.rows * ppu)));
    } else {
      b.w = std::max(40, int(std::lround(free_w * p.values.cols / std::max(1, free_cols))));
      b.h = int(free_h);
    }
    if (i > 0) x += panels[i].down.label == panels[i - 1].down.label ? gap_same : gap_new;
    b.x = x;
    b.y = top;
    x += b.w;
    height = std::max(height, b.h);
    L.panels.push_back(b);
  }
  L.bar = {x + 24, top, 18, height};
  L.width = x + right;
  L.height = top + height + bottom;

  return L;
}

/// The colour bar in `bar`, hi at the top, with its ticks and label.
void draw_colour_bar(Canvas& canvas, const Box& bar, const ColourScale& scale) {
  cairo_t* cr = canvas.cr();
  for (int r = 0; r < bar.h; ++r) {
    const unsigned c = colour_of(scale.map, 1.0 - (r + 0.5) / bar.h);
    cairo_set_source_rgb(cr, ((c >> 16) & 255) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0);
    cairo_rectangle(cr, bar.x, bar.y + r, bar.w, 1);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, bar.x + 0.5, bar.y + 0.5, bar.w - 1, bar.h - 1);
  cairo_stroke(cr);
  if (scale.hi > scale.lo)
    for (double v : nice_ticks(scale.lo, scale.hi, 6)) {
      const double py = std::floor(bar.y + bar.h * (scale.hi - v) / (scale.hi - scale.lo)) + 0.5;
      canvas.line(bar.x + bar.w, py, bar.x + bar.w + 5, py);
      canvas.text(number(v), bar.x + bar.w + 8, py, kTick, 0, 0.5);
    }
  canvas.text(scale.label, bar.x + bar.w + 80, bar.y + bar.h / 2.0, kLabel, 0.5, 0.5, -M_PI / 2);
}

}  // namespace

Layout draw(const std::string& path, const std::string& title, const std::vector<Panel>& panels,
            const ColourScale& scale) {
  if (panels.empty()) throw InputError(path + ": nothing to draw");
  for (const Panel& p : panels)
    if (p.values.rows <= 0 || p.values.cols <= 0 ||
        p.values.values.size() != std::size_t(p.values.rows) * std::size_t(p.values.cols))
      throw InputError(path + ": nothing to draw (empty array)");
  const Layout L = layout_of(panels);
  Canvas canvas(L.width, L.height);
  cairo_t* cr = canvas.cr();
  canvas.text(title, L.width / 2.0, 10, kTitle, 0.5, 0, 0, true);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const Panel& p = panels[i];
    const Box& b = L.panels[i];
    paint_image(cr, p.values, scale, b);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1);
    cairo_stroke(cr);
    if (!p.caption.empty()) canvas.text(p.caption, b.x + b.w / 2.0, b.y - 20, kLabel, 0.5, 0);
    for (const auto& [px, v] : axis_ticks(p.across, p.values.cols, b.x, b.w)) {  // across: below
      canvas.line(px, b.y + b.h, px, b.y + b.h + 5);
      canvas.text(number(v), px, b.y + b.h + 8, kTick, 0.5, 0);
    }
    canvas.text(p.across.label, b.x + b.w / 2.0, b.y + b.h + 28, kLabel, 0.5, 0);
    if (i == 0 || p.down.label != panels[i - 1].down.label) {  // down: on the left, once per kind
      for (const auto& [py, v] : axis_ticks(p.down, p.values.rows, b.y, b.h)) {
        canvas.line(b.x - 5, py, b.x, py);
        canvas.text(number(v), b.x - 8, py, kTick, 1, 0.5);
      }
      canvas.text(p.down.label, b.x - 58, b.y + b.h / 2.0, kLabel, 0.5, 0.5, -M_PI / 2);
    }
  }
  draw_colour_bar(canvas, L.bar, scale);
  canvas.write(path);
  return L;
}

std::vector<Panel> field_panels(const Field& f, int iz, int iy, int ix) {
  auto at = [&](int z, int y, int x) {
    return f.values[(std::size_t(z) * std::size_t(f.ny) + std::size_t(y)) * std::size_t(f.nx) + std::size_t(x)];
  };
  // One unit for every axis, so the panels drawn to scale keep the field's proportions.
  const bool km =
      std::max({std::abs(f.dz) * (f.nz - 1), std::abs(f.dy) * (f.ny - 1), std::abs(f.dx) * (f.nx - 1)}) >= 5000;
  const Axis depth = distance_axis("depth", f.z0, f.dz, km), xs = distance_axis("x", f.x0, f.dx, km),
             ys = distance_axis("y", f.y0, f.dy, km);
  Panel zx{{f.nz, f.nx, {}}, depth, xs, "", true};
  for (int z = 0; z < f.nz; ++z)
    for (int x = 0; x < f.nx; ++x) zx.values.values.push_back(at(z, f.ny > 1 ? iy : 0, x));
  if (f.ny == 1) return {zx};
  auto where = [](const char* name, double v) { return std::string(name) + " = " + number(v) + " m"; };
  zx.caption = where("y", f.y0 + iy * f.dy);
  Panel zy{{f.nz, f.ny, {}}, depth, ys, where("x", f.x0 + ix * f.dx), true};
  for (int z = 0; z < f.nz; ++z)
    for (int y = 0; y < f.ny; ++y) zy.values.values.push_back(at(z, y, ix));
  Panel yx{{f.ny, f.nx, {}}, ys, xs, where("depth", f.z0 + iz * f.dz), true};
  for (int y = 0; y < f.ny; ++y)
    for (int x = 0; x < f.nx; ++x) yx.values.values.push_back(at(iz, y, x));
  return {zx, zy, yx};
}

namespace {
std::vector<Panel> panels_at(const Field& f, std::array<int, 3> at) {
  return field_panels(f, at[0] < 0 ? f.nz / 2 : at[0], at[1] < 0 ? f.ny / 2 : at[1], at[2] < 0 ? f.nx / 2 : at[2]);
}
}  // namespace

Layout plot_model(const std::string& path, const Field& vp, const std::string& title, double lo, double hi,
                  std::array<int, 3> at) {
  if (!(hi > lo)) {
    lo = INFINITY;
    hi = -INFINITY;
    for (float v : vp.values)
      if (!std::isnan(v)) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    if (!(hi > lo)) hi = lo + 1;  // one velocity everywhere
  }
  return draw(path, title, panels_at(vp, at), {Colormap::Velocity, lo, hi, "velocity (m/s)"});
}

Layout plot_section(const std::string& path, const Field& f, const std::string& title, const std::string& label,
                    double clip, std::array<int, 3> at) {
  const double a = clip_amplitude(f.values, clip);
  return draw(path, title, panels_at(f, at), {Colormap::Seismic, -a, a, label});
}

Layout plot_gather(const std::string& path, const Image2D& traces, double dt, const std::string& title,
                   const std::vector<int>& line, double clip, double amplitude, int first) {
  // Receiver lines (one in 2-D) as runs of traces [start, end).
  std::vector<std::pair<int, int>> runs;
  for (int r0 = 0; r0 < traces.rows;) {
    int r1 = r0 + 1;
    while (r1 < traces.rows && !line.empty() && line[std::size_t(r1)] == line[std::size_t(r0)]) ++r1;
    if (line.empty()) r1 = traces.rows;
    runs.emplace_back(r0, r1);
    r0 = r1;
  }
  // One panel per line, traces across and time down; past kMaxGatherPanels lines (a field
  // survey's hundreds), consecutive lines share a panel, so the picture keeps its width.
  const std::size_t groups = std::min(runs.size(), std::size_t(kMaxGatherPanels));
  std::vector<Panel> panels;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t l0 = g * runs.size() / groups, l1 = (g + 1) * runs.size() / groups;
    const int r0 = runs[l0].first, r1 = runs[l1 - 1].second;
    const Axis time = dt > 0 ? Axis{0, dt, "time (s)"} : Axis{0, 1, "sample"};
    Panel p{{traces.cols, r1 - r0, {}}, time, {double(first + r0), 1, "receiver"}, "", false};
    p.values.values.resize(std::size_t(p.values.rows) * std::size_t(p.values.cols));
    for (int r = r0; r < r1; ++r)
      for (int n = 0; n < traces.cols; ++n)
        p.values.values[std::size_t(n) * std::size_t(p.values.cols) + std::size_t(r - r0)] =
            traces.values[std::size_t(r) * std::size_t(traces.cols) + std::size_t(n)];
    if (!line.empty()) {
      const int a = line[std::size_t(r0)], b = line[std::size_t(r1 - 1)];
      p.caption = l1 - l0 == 1 ? "line " + std::to_string(a) : "lines " + std::to_string(a) + "–" + std::to_string(b);
    }
    panels.push_back(std::move(p));
  }
  const double a = amplitude > 0 ? amplitude : clip_amplitude(traces.values, clip);
  return draw(path, title, panels, {Colormap::Seismic, -a, a, "amplitude"});
}

Layout plot_curve(const std::string& path, const Curve& c) {
  Layout L;
  L.width = 800;
  L.height = 400;
  const Box plot{90, 40, 800 - 90 - 30, 400 - 40 - 60};
  L.panels = {plot};
  Canvas canvas(L.width, L.height);
  cairo_t* cr = canvas.cr();
  canvas.text(c.title, L.width / 2.0, 10, kTitle, 0.5, 0, 0, true);
  std::vector<std::pair<double, double>> pts;  // (index, value or log10 value)
  for (std::size_t i = 0; i < c.values.size(); ++i)
    if (std::isfinite(c.values[i]) && (!c.log_scale || c.values[i] > 0))
      pts.emplace_back(c.x.size() == c.values.size() ? c.x[i] : double(i),
                       c.log_scale ? std::log10(c.values[i]) : c.values[i]);
  double lo = 0, hi = 1;
  if (!pts.empty()) {
    lo = hi = pts[0].second;
    for (const auto& p : pts) lo = std::min(lo, p.second), hi = std::max(hi, p.second);
  }
  if (c.log_scale) {  // whole decades
    lo = std::floor(lo);
    hi = std::max(std::ceil(hi), lo + 1);
  } else if (!(hi > lo)) {
    hi = lo + 1;
  }
  double n = 1;  // the last abscissa
  for (const auto& p : pts) n = std::max(n, p.first);
  auto px = [&](double i) { return plot.x + plot.w * i / n; };
  auto py = [&](double v) { return plot.y + plot.h * (hi - v) / (hi - lo); };
  // Axes with ticks: iterations below, values (decades on a log scale) on the left.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, plot.x + 0.5, plot.y + 0.5, plot.w, plot.h);
  cairo_stroke(cr);
  for (double i : nice_ticks(0, n, 8)) {
    if (i != std::floor(i)) continue;
    canvas.line(px(i), plot.y + plot.h, px(i), plot.y + plot.h + 5);
    canvas.text(number(i), px(i), plot.y + plot.h + 8, kTick, 0.5, 0);
  }
  canvas.text(c.xlabel, plot.x + plot.w / 2.0, plot.y + plot.h + 28, kLabel, 0.5, 0);
  if (c.log_scale) {
    for (double d = lo; d <= hi + 1e-9; d += 1) {
      canvas.line(plot.x - 5, py(d), plot.x, py(d));
      canvas.text("1e" + number(d), plot.x - 8, py(d), kTick, 1, 0.5);
      for (int k = 2; k < 10 && d < hi; ++k)
        canvas.line(plot.x - 3, py(d + std::log10(k)), plot.x, py(d + std::log10(k)));
    }
  } else {
    for (double v : nice_ticks(lo, hi, 6)) {
      canvas.line(plot.x - 5, py(v), plot.x, py(v));
      canvas.text(number(v), plot.x - 8, py(v), kTick, 1, 0.5);
    }
  }
  canvas.text(c.ylabel, 22, plot.y + plot.h / 2.0, kLabel, 0.5, 0.5, -M_PI / 2);
  // Band boundaries: dashed, labelled at the top.
  for (const auto& [i, label] : c.marks) {
    cairo_save(cr);
    const double dash[] = {5, 4};
    cairo_set_dash(cr, dash, 2, 0);
    canvas.line(px(i), plot.y, px(i), plot.y + plot.h, 1, 0.45);
    cairo_restore(cr);
    canvas.text(label, px(i) + 4, plot.y + 4, kTick, 0, 0);
  }
  // The curve: a line through the values, a dot at each.
  cairo_set_source_rgb(cr, 0.05, 0.2, 0.6);
  cairo_set_line_width(cr, 2);
  for (std::size_t k = 0; k < pts.size(); ++k)
    (k == 0 ? cairo_move_to : cairo_line_to)(cr, px(pts[k].first), py(pts[k].second));
  cairo_stroke(cr);
  for (const auto& p : pts) {
    cairo_arc(cr, px(p.first), py(p.second), 3, 0, 2 * M_PI);
    cairo_fill(cr);
  }
  canvas.write(path);
  return L;
}

Folder::Folder(const std::string& dir, const std::string& option, const std::vector<std::string>& names, bool overwrite,
               const std::vector<std::string>& inputs, bool active)
    : dir_(dir), option_(option), active_(active) {
  if (!active_) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path d(dir);
  const fs::path parent = d.has_parent_path() ? d.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    throw InputError(option + ": " + dir + ": the folder " + parent.string() + " it goes in does not exist");
  if (fs::exists(d, ec) && !fs::is_directory(d, ec)) throw InputError(option + ": " + dir + " is a file, not a folder");
  // Writable now, before any work, not at the first picture (a read-only folder or file
  // system, a folder without write permission).
  const fs::path writes_in = fs::is_directory(d, ec) ? d : parent;
  if (::access(writes_in.c_str(), W_OK | X_OK) != 0)
    throw InputError(option + ": " + dir + ": cannot write in " + writes_in.string() + ": " + os_cause(errno));
  for (const std::string& name : names) {  // a user's own file is replaced only when asked
    const std::string p = (d / name).string();
    safety::refuse_input_as_output(p, option, inputs);
    safety::refuse_link(p, "remove it, or choose another " + option + " folder");
    if (fs::exists(fs::symlink_status(p, ec)) && !overwrite)
      throw InputError(p + ": exists already; pass --overwrite to replace it, or choose another " + option + " folder");
  }
  // A folder that cannot be made (a name too long, a file system that refuses) stops the run
  // here: made and removed at once, so that a run killed outright before its first picture
  // leaves no folder of its own (docs/guarantees.md); create() makes it for good.
  if (!fs::exists(d, ec)) {
    if (!fs::create_directory(d, ec))
      throw InputError(option + ": " + dir + ": cannot create the figures folder: " + os_cause(ec.value()));
    fs::remove(d, ec);
  }
}

void Folder::create() {
  if (!active_) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    if (!fs::create_directory(dir_, ec))
      throw InputError(option_ + ": " + dir_ + ": cannot create the figures folder: " + os_cause(ec.value()));
    made_ = true;
    safety::track(dir_);  // a signal before the run is done removes it (once emptied) too
  }
}

std::string Folder::file(const std::string& name) {
  const std::string path = (std::filesystem::path(dir_) / name).string();
  if (drawn_.insert(name).second && active_ && !kept_) {
    safety::remove_stale_temporaries_of(path);  // left by a run killed outright
    safety::track(path);                        // a signal ending the run before keep() removes it
  }
  return path;
}

void Folder::keep() {
  if (kept_) return;
  kept_ = true;
  for (const std::string& name : drawn_) safety::untrack((std::filesystem::path(dir_) / name).string());
  if (made_) safety::untrack(dir_);
}

Folder::~Folder() {
  if (!active_ || kept_) return;
  std::error_code ec;
  for (const std::string& name : drawn_) {
    const std::filesystem::path p = std::filesystem::path(dir_) / name;
    std::filesystem::remove(p, ec);
    safety::untrack(p.string());
  }
  if (made_) std::filesystem::remove(dir_, ec);  // only if empty: nothing of the user's goes
  if (made_) safety::untrack(dir_);
}

}  // namespace starwave::figures
