// src/plot/figures.hpp — pictures a person can put in a report (Cairo, PNG): sections and
// slices of models, gradients and images with axes in m or km, shot gathers with receiver
// and time axes, colour bars with values and units, titles, and the misfit curve with a
// labelled log axis and band boundaries.
#pragma once

#include <array>
#include <set>
#include <string>
#include <vector>

namespace starwave::figures {

enum class Colormap { Velocity, Seismic };

struct Image2D {
  int rows = 0, cols = 0;
  std::vector<float> values;  // row-major; NaN is drawn blank (white)
};

/// A panel's axis: cell i's centre lies at origin + i·step, in the axis' unit; `label` is
/// what the axis says ("x (km)", "time (s)", "receiver").
struct Axis {
  double origin = 0, step = 1;
  std::string label;
};

/// A distance axis of n cells from `origin` in m, every `step` m: in km when it spans 5 km
/// or more (or when `km` says so). `name` is e.g. "x", "y", "depth".
Axis distance_axis(const std::string& name, double origin, double step, int n);
Axis distance_axis(const std::string& name, double origin, double step, bool km);

/// One picture in a figure: a 2-D array with rows downwards, its two axes and a caption
/// above it; `to_scale` panels keep the axes' physical proportions (sections), the others
/// take the room they are given (gathers).
struct Panel {
  Image2D values;
  Axis down, across;
  std::string caption;
  bool to_scale = true;
};

/// The colours of a figure and what its colour bar says (values between lo and hi, `label`
/// with its unit: "velocity (m/s)", "amplitude").
struct ColourScale {
  Colormap map = Colormap::Velocity;
  double lo = 0, hi = 1;
  std::string label;
};

/// Where things went, in pixels from the top left (for tests and callers that annotate).
struct Box {
  int x = 0, y = 0, w = 0, h = 0;
};
struct Layout {
  int width = 0, height = 0;
  std::vector<Box> panels;  // each panel's data area
  Box bar;                  // the colour bar (hi at the top)
};

/// Draws `panels` side by side under `title`, with a colour bar on the right, into the PNG
/// `path` (written atomically: a failed write leaves nothing).
Layout draw(const std::string& path, const std::string& title, const std::vector<Panel>& panels,
            const ColourScale& scale);

/// The colour of value t ∈ [0, 1] of a colour map, as 0xRRGGBB.
unsigned colour_of(Colormap map, double t);

/// The `clip` quantile of |value| (1 when it is zero): the grey scale's saturation.
double clip_amplitude(const std::vector<float>& values, double clip);

/// A model, gradient or image: nz × ny × nx values (z slowest; ny = 1 in 2-D) on a grid of
/// spacing (dz, dy, dx) from (z0, y0, x0), in m.
struct Field {
  int nz = 0, ny = 1, nx = 0;
  double dz = 1, dy = 1, dx = 1, z0 = 0, y0 = 0, x0 = 0;
  std::vector<float> values;
};

/// The panels of a field: the section (depth, x) in 2-D; in 3-D three slices through cell
/// (iz, iy, ix) — the section (depth, x) at y, the section (depth, y) at x and the plan
/// (y, x) at that depth — each captioned with where it lies.
std::vector<Panel> field_panels(const Field& f, int iz, int iy, int ix);

/// A velocity model's figure: colours between lo and hi (its own min and max when hi ≤ lo);
/// a 3-D model's slices through cell `at` (z, y, x; −1: the middle).
Layout plot_model(const std::string& path, const Field& vp, const std::string& title, double lo = 0, double hi = 0,
                  std::array<int, 3> at = {-1, -1, -1});

/// A gradient, image or illumination: grey scale symmetric about zero, clipped at the `clip`
/// quantile of |value|; `label` names the colour bar (what and which unit).
Layout plot_section(const std::string& path, const Field& f, const std::string& title, const std::string& label,
                    double clip = 0.98, std::array<int, 3> at = {-1, -1, -1});

/// A shot gather: nrec traces of nt samples every dt s, time downwards, grey scale
/// symmetric about zero clipped at the `clip` quantile of |amplitude| (or at ±`amplitude`
/// when given, to show residuals on their data's scale). `line` (3-D) gives each
/// receiver's line: the lines are drawn as panels side by side, captioned; beyond
/// kMaxGatherPanels lines, consecutive lines share a panel ("lines 9–16"). `first` is the
/// receiver number of trace 0 (for one line drawn alone).
constexpr int kMaxGatherPanels = 8;
Layout plot_gather(const std::string& path, const Image2D& traces, double dt, const std::string& title,
                   const std::vector<int>& line = {}, double clip = 0.98, double amplitude = 0, int first = 1);

/// A curve (the misfit per iteration) on a log scale or not, 800 × 400, with the axes'
/// labels, and a dashed line with a label at each `marks` abscissa (e.g. where a band
/// starts). Value k lies at abscissa x[k] (k when x is empty).
struct Curve {
  std::string title, xlabel, ylabel;
  std::vector<double> values;
  bool log_scale = true;
  std::vector<std::pair<double, std::string>> marks;
  std::vector<double> x;
};
Layout plot_curve(const std::string& path, const Curve& c);

/// The folder of pictures a run draws into (fwi --figures). The constructor refuses, before
/// any work: a folder whose parent does not exist, a file in its place, a picture that
/// would replace an existing file without `overwrite`, one that is an input, and a folder
/// it cannot make (tried, then removed). create() makes the folder when the run starts
/// drawing; file(name) is where to draw `name`. Unless keep()
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
  /// The pictures stay: neither the destructor nor a signal removes them from now on.
  void keep();

 private:
  std::string dir_, option_;
  std::set<std::string> drawn_;
  bool active_, made_ = false, kept_ = false;
};

}  // namespace starwave::figures
