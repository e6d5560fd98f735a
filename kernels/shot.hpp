// kernels/shot.hpp — the description of one shot's propagation, as raw pointers, shared by
// the CPU and CUDA propagators. Pure data: no StarPU, no I/O.
//
// Grid layout: the padded grid (user's model + absorbing layers) has nz × nx cells; every
// array is allocated with `halo` guard cells on each side, row-major with `stride` =
// nx + 2·halo. Indices such as `source_index` address the padded grid from its first
// non-guard cell: i = z·stride + x.
#pragma once

#include <cstddef>

#include "kernels/hd.hpp"

namespace starwave {

template <typename T>
struct ShotProblem {
  int nz = 0, nx = 0;  // padded grid (model + absorbing layers), guard cells excluded
  int halo = 0;        // guard cells on each side (stencil radius)
  long stride = 0;     // nx + 2·halo
  int pml_top = 0, pml_bottom = 0, pml_left = 0, pml_right = 0;  // layer widths (cells)
  bool free_surface = false;                                     // mirror about row pml_top (which is then 0)
  T dz = 0, dx = 0;

  const T* vdt2 = nullptr;  // v²Δt², full allocation (guards included)
  const T* a_z = nullptr;   // CPML coefficients, length nz (rows) and nx (columns)
  const T* b_z = nullptr;
  const T* a_x = nullptr;
  const T* b_x = nullptr;

  int nsteps = 0;             // internal time steps: computes u[1] … u[nsteps]
  int record_every = 1;       // k: trace sample n is u[n·k]
  int nt = 0;                 // samples per trace
  const T* source = nullptr;  // s[m]·δ_h for m = 0 … nsteps−1 (already divided by Δz Δx)
  long source_index = 0;
  int nrec = 0;
  const long* receiver_index = nullptr;
  T* traces = nullptr;  // nrec × nt, row per receiver

  T* work = nullptr;  // scratch: kWorkGrids grids of grid_size() values

  static constexpr int kWorkGrids = 6;  // u, u_prev, ψz, ψx, ζz, ζx
  SW_HD std::size_t grid_size() const { return std::size_t(nz + 2 * halo) * std::size_t(stride); }
  SW_HD std::size_t work_size() const { return kWorkGrids * grid_size(); }
  SW_HD long origin() const { return long(halo) * stride + halo; }
};

}  // namespace starwave
