// src/figures.hpp — PNG pictures of models and shot gathers (libpng).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace starwave::figures {

enum class Colormap { Velocity, Seismic };

struct Image2D {
  int rows = 0, cols = 0;
  std::vector<float> values;  // row-major
};

/// Writes `img` to `path` (atomically) with a colour scale from `lo` to `hi`; each cell
/// becomes a block of pixels so the picture is at least `min_width` pixels wide. A colour
/// bar is drawn under the image.
void write_png(const std::string& path, const Image2D& img, Colormap cmap, double lo, double hi, int min_width = 800);

/// A model picture: velocity colours between the model's min and max (or given bounds).
void plot_model(const std::string& path, const Image2D& vp, double lo = 0, double hi = 0);

/// The `clip` quantile of |value| (1 when it is zero): the grey scale's saturation.
double clip_amplitude(const std::vector<float>& values, double clip);

/// A shot-gather picture: (nrec, nt) traces shown with time downwards, grey-scale
/// symmetric about zero, clipped at the `clip` quantile of |amplitude|, or at ±`amplitude`
/// when that is given (to show residuals on their data's scale).
void plot_gather(const std::string& path, const Image2D& traces, double clip = 0.98, double amplitude = 0);

/// A 3-D shot's gather (nrec, nt) with its receiver lines side by side: `line` gives each
/// receiver's line (non-decreasing), and a blank (NaN) gap of a few traces separates one
/// line from the next, so an areal spread reads as panels.
Image2D gather_lines(const Image2D& traces, const std::vector<int>& line);

/// A section (gradient, image): grey-scale symmetric about zero, clipped at the `clip`
/// quantile of |value|, rows downwards.
void plot_section(const std::string& path, const Image2D& img, double clip = 0.98);

/// Three orthogonal slices of a 3-D array (nz, ny, nx; z slowest) through cell (iz, iy, ix),
/// side by side on one picture: the section (z, x) at row iy, the section (z, y) at
/// column ix, and the plan (y, x) at depth iz; blank (NaN) between and around them.
Image2D three_slices(const std::vector<float>& v, int nz, int ny, int nx, int iz, int iy, int ix);

/// A curve (e.g. the misfit per iteration): values left to right, optionally on a log
/// scale, in a box; no text (the numbers are in the result file and the log).
void plot_curve(const std::string& path, const std::vector<double>& values, bool log_scale);

/// The folder of pictures a run draws into (fwi --figures). The constructor refuses, before
/// any work: a folder whose parent does not exist, a file in its place, a picture that
/// would replace an existing file without `overwrite`, and one that is an input. create()
/// makes the folder when the run starts; file(name) is where to draw `name`. Unless keep()
/// was called (the run ended), the destructor removes what was drawn, and the folder if it
/// made it: a failed run leaves no pictures behind. Inert where `active` is false (the
/// MPI ranks that do not draw).
class Folder {
 public:
  Folder(const std::string& dir, const std::string& option, const std::vector<std::string>& names, bool overwrite,
         const std::vector<std::string>& inputs, bool active);
  ~Folder();
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  void create();
  std::string file(const std::string& name);
  void keep() { kept_ = true; }

 private:
  std::string dir_;
  std::set<std::string> drawn_;
  bool active_, made_ = false, kept_ = false;
};

}  // namespace starwave::figures
