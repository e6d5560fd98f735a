// src/numerics/propagator.hpp — turns a model, a survey and the numerical options into what the
// kernels need (docs/design.md §2): the padded grid with its CPML coefficients, the internal time
// step, per-shot source samples and node indices.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/shot.hpp"
#include "src/base/aligned.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"

namespace starwave {

/// The floating-point type a run computes in (--precision): its wavefields, medium and
/// traces; sums of misfits are double either way.
enum class Precision { kSingle, kDouble };

template <typename T>
constexpr Precision precision_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  return std::is_same_v<T, double> ? Precision::kDouble : Precision::kSingle;
}

/// `f(T{})` with T the type of `p`: the one place a precision becomes a type.
template <typename F>
decltype(auto) with_precision(Precision p, F&& f) {
  if (p == Precision::kDouble) return f(double{});
  return f(float{});
}

struct NumericalOptions {
  int order = 8;       // 2, 4, 6, 8
  int pml_width = 20;  // cells
  // A width for each side — top, bottom, front, back, left, right (z, y, x low and high); −1:
  // pml_width (Python's pml_width=[…]; the top's is 0 with a free surface).
  std::array<int, 6> pml_sides{-1, -1, -1, -1, -1, -1};
  bool free_surface = false;  // no layer on top; u = 0 on the first model row
  // Model cells next to each layer in its CPML region (a = b = 0: they read the layer's ∂ψ);
  // −1: the stencil's radius (docs/design.md §2). 0 stores less and absorbs less at the edges.
  int pml_inset = -1;
  Precision precision = Precision::kSingle;
  double internal_dt = 0;  // s; 0 = choose from the stability bound
  double pml_reflection = 1e-3;
  double pml_velocity = 0;   // m/s, the CPML profile's speed; 0 = the model's v_max (docs/design.md §2)
  double pml_frequency = 0;  // Hz, the CPML's α frequency; 0 = the first wavelet's dominant frequency
  double cfl_safety = 0.9;   // automatic step = safety × stability bound (at most)
  static constexpr int kStorageDefault = -1;  // boundary for gradients, shell for RTM
  int storage = kStorageDefault;  // gradient/RTM: what the forward keeps, a ShotProblem::kStore* (--storage)
  static constexpr int kCheckpointAuto = -1;  // checkpoints only when a shot's store does not fit (docs/design.md §9)
  int checkpoint_every = kCheckpointAuto;     // steps between the forward states kept; 0: never (--checkpoint-every)
  int store_compression = pack16::kNone;  // the store's values in T, IEEE half, bfloat16 or ZFP (--store-compression)
  // J (born_scatter): the absorbing layers carry their edge cells' δv, as they copy their
  // velocity (J the exact derivative of F); false: they carry none (Deepwave's scalar_born,
  // whose transpose is the gradient without the layers' share: storage kStoreShell).
  bool perturb_layers = true;

  /// The layers' width on side i (pml_sides' order).
  int pml_side(int i) const { return pml_sides[std::size_t(i)] >= 0 ? pml_sides[std::size_t(i)] : pml_width; }
  /// Throws InputError on values out of range, naming the option.
  void validate() const;
};

/// The internal time step: the data are sampled every `k` internal steps.
struct TimeStepping {
  double dt_stable = 0;  // docs/design.md §2 bound
  double dt = 0;         // internal step (data dt / k)
  int k = 1;
  int nsteps = 0;  // (nt − 1)·k
};

/// More internal steps per data sample than this means dt is not a sampling interval in
/// seconds (a data file's dt of 1e300, or milliseconds taken for seconds): refused.
inline constexpr double kMaxStepsPerSample = 10000;

/// Chooses k (or checks an explicit internal step) and refuses a survey of another
/// dimension than the model, unstable steps, a k above kMaxStepsPerSample and records of
/// more than 2^31 steps.
TimeStepping choose_time_step(const Model& m, const Survey& s, const NumericalOptions& o);

/// Largest stable step for a velocity, spacing and order (docs/design.md §2); dy > 0 for a 3-D grid.
double stable_time_step(double vmax, double dz, double dx, int order, double dy = 0);

/// Refuses a survey whose positions have another dimension than the model (InputError).
void check_dimensions(const Model& m, const Survey& s);

/// Dominant frequency (Hz) of a sampled wavelet, from its amplitude spectrum.
double dominant_frequency(const std::vector<float>& w, double dt);

/// Everything shared by every shot of a run, in precision T.
template <typename T>
struct Medium {
  ShotProblem<T> layout;     // grid geometry and time-stepping fields; pointers unset
  aligned_vector<T> buffer;  // ShotProblem::medium_size(): [v²Δt² grid | a_z | b_z | a_x | b_x | a_y | b_y]
  int model_top = 0, model_front = 0, model_left = 0;  // padded-grid position of model cell (0, 0, 0)

  std::size_t grid_size() const { return layout.grid_size(); }
  /// Sets the medium pointers of `p` into `base` (a copy of `buffer` anywhere).
  void attach(ShotProblem<T>& p, const T* base) const;
};

/// The padded grid of a model (layers, strides, spacing) without the medium's values;
/// refuses a grid of 2^31 cells or more.
template <typename T>
Medium<T> medium_layout(const Model& m, const NumericalOptions& o);

template <typename T>
Medium<T> build_medium(const Model& m, const NumericalOptions& o, const TimeStepping& ts, int nt, double pml_frequency);

/// Hicks' (2002) windowed sinc for points off the grid's nodes (docs/design.md §2): 2·r nodes per
/// dimension, Kaiser parameter b; a coordinate within kOnNode cells of a node is on it.
inline constexpr int kHicksRadius = 4;
inline constexpr double kHicksBeta = 6.31;
inline constexpr double kOnNode = 1e-6;
/// Whether a coordinate f, in cells, lies on a node (within kOnNode).
inline bool on_node(double f) { return std::abs(f - std::round(f)) <= kOnNode; }

/// The weighted nodes (padded-grid offsets from the first non-guard cell, ascending) at
/// which a position in the model is injected and sampled: one node of weight 1 on a node,
/// else the product of each dimension's windowed sinc (mirrored, odd, about a free
/// surface); InputError naming `what` when it lies outside the model.
template <typename T>
PointNodes point_nodes(const Medium<T>& med, const Model& m, const Position& p, const std::string& what);

/// InputError "`what` at (z=…, x=…) lies outside the model (…)" unless p lies in the model
/// (to within kOnNode cells of its edge).
void require_inside(const Model& m, const Position& p, const std::string& what);

/// Whether p lies in the model, as require_inside() decides it.
bool inside(const Model& m, const Position& p);

/// The most nodes one of the survey's positions takes: 1 when every position lies on a
/// node, else (2·kHicksRadius)^D (for memory estimates).
int most_point_nodes(const Model& m, const Survey& s);

/// Bytes of a shot's nodes and weights when each position takes at most `nodes` nodes.
template <typename T>
std::uint64_t points_bytes(const ShotProblem<T>& layout, int nodes) {
  return sizeof(long) * ShotProblem<T>::nodes_size(nodes, layout.nrec, nodes * layout.nrec, layout.rows()) +
         sizeof(T) * std::uint64_t(nodes) * std::uint64_t(layout.nrec + 1);
}

/// 2δv/v on layout l's padded grid (grid layout, grid_size() values, zero in the guard
/// cells), each layer cell holding the value of the model cell whose velocity it copies: the
/// scatter of the Born modelling (kernels/cpu/born.hpp). `dv`: one value a model cell, in
/// Model::index order. `layers` false: the layer cells hold 0 (NumericalOptions::perturb_layers).
template <typename T>
std::vector<T> born_scatter(const ShotProblem<T>& l, const Model& m, const std::vector<double>& dv, bool layers = true);

/// The per-shot inputs of the forward task.
template <typename T>
struct ShotInputs {
  std::vector<T> signals;   // nsteps samples of s(t)·δ_h at the internal step, then the points' weights
  std::vector<long> nodes;  // the points' nodes and the receivers' gather (kernels/shot.hpp)
  int nsrc = 0, nent = 0;   // source nodes and receiver entries
  /// Sets the shot's point counts in `p` (its nrec set already).
  void apply(ShotProblem<T>& p) const {
    p.nsrc = nsrc;
    p.nent = nent;
  }
};

template <typename T>
ShotInputs<T> shot_inputs(const Medium<T>& med, const Model& m, const Survey& s, const TimeStepping& ts, int shot);

/// Shot `shot`'s point counts: those of `built` when it holds the shot's inputs (nodes not
/// empty), else counted from the positions (a rank that does not own the shot registers
/// its handles with the same sizes).
template <typename T>
ShotInputs<T> point_counts(const Medium<T>& med, const Model& m, const Survey& s, int shot, const ShotInputs<T>& built);

/// Band-limited resampling of `w` (interval dt) at interval dt/k, `count` samples
/// (windowed-sinc interpolation; exact at the original samples).
std::vector<double> upsample(const std::vector<double>& w, int k, int count);
/// The transpose of upsample(·, k, count) onto `n` samples: the cotangent of the input samples
/// from that of the `count` resampled ones (`g`).
std::vector<double> upsample_transpose(const std::vector<double>& g, int k, int n);

}  // namespace starwave
