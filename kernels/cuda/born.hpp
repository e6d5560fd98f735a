// kernels/cuda/born.hpp — J's CUDA thread bodies and launch sequence: the background u and the
// scattered field δu stepped together (kernels/cpu/propagate.cpp's born_step and
// kernels/cpu/born.cpp's born_steps: the same operations on each value, in the same order).
// A step is u's side launch (ψ, its trace sample if recorded, its store slot: the forward's),
// δu's side launch (ψ, the Born trace sample), and one update launch, a cell a thread (its cell
// from host-prepared divisors); runs of steps are replayed as one graph, as the forward's.
#pragma once

#include "kernels/cuda/forward.hpp"

namespace starwave::cuda_bodies {

/// Born step m at cell (z, y, x): u[m+1] (`a`) and δu[m+1] (`b`, the same grid), δu gaining the
/// secondary source sc · (u[m+1] − 2u[m] + u[m−1]) (`scatter`: the padded grid's, pointing at
/// cell (0, 0, 0) as the fields do),
/// as the CPU's born_row adds it: in a layer row (z or y), u's and δu's whole updates, then
/// sc · (u[m+1] − (2u[m] − u[m−1])); in a model row both interiors at once (δu's gaining
/// sc · v²Δt² ∇²u), the x corrections of u then of δu, then, over the CPU's x-side loops
/// ([0, xloop_left) and [xloop_right, nx)), sc · (u[m+1] − u's interior update). Then the
/// source: u's, its share sc · v²Δt² f in δu and δu's own source of nothing (+ v²Δt² w · 0),
/// and the free surface of both.
template <int Order, typename T>
SW_HD void born_cell(const stencil::StepArgs<T>& a, const stencil::StepArgs<T>& b, const ShotProblem<T>& p,
                     const T* scatter, int m, int z, int y, int x) {
  const long i = a.cell(z, y, x);
  T* out = a.u_prev_next + i;
  T* dout = b.u_prev_next + i;
  const T sc = scatter[i], v = a.vdt2[i];
  T keep;
  if (a.z_layer(z) || (a.three_d() && a.y_layer(y))) {
    keep = T(2) * a.u[i] - out[0];
    stencil::update_point<Order>(a, z, y, x);
    stencil::update_point<Order>(b, z, y, x);
    dout[0] += sc * (out[0] - keep);
  } else {
    const T inc = v * stencil::laplacian<Order>(a.u + i, a.plane, a.ystep, a.inv_dz2, a.inv_dy2, a.inv_dx2);
    out[0] = T(2) * a.u[i] - out[0] + inc;
    const T dinc = v * stencil::laplacian<Order>(b.u + i, b.plane, b.ystep, b.inv_dz2, b.inv_dy2, b.inv_dx2);
    dout[0] = T(2) * b.u[i] - dout[0] + dinc + sc * inc;
    keep = out[0];
    stencil::add_layer_corrections<Order>(a, z, y, x);
    stencil::add_layer_corrections<Order>(b, z, y, x);
    if (x < a.xloop_left || x >= a.xloop_right) dout[0] += sc * (out[0] - keep);
  }
  const int j = p.source_at(i, z * p.ny + y);
  if (j >= 0) {
    out[0] += v * (p.source_weight[j] * p.source[m]);
    dout[0] += sc * (v * (p.source_weight[j] * p.source[m]));
    dout[0] += b.vdt2[i] * (p.source_weight[j] * T(0));
  }
  if (p.free_surface) {
    mirror_cell(out, a.plane, z, p.pml_top, p.halo);
    mirror_cell(dout, b.plane, z, p.pml_top, p.halo);
  }
}

/// Born step `step`'s launches on `p` (u = u[m], up = u[m−1], p.work's layer arrays: what
/// the forward keeps, its traces if p.traces) and `d` (du, dup, d.work's layer arrays, the
/// Born traces in d.traces); `last` (m = nsteps): the side launches alone.
template <int Order, typename T, typename Exec>
void issue_born_step(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, const StoreCells& sc,
                     const T* u, T* up, const T* du, T* dup, Exec& e, Step step, bool last) {
  const stencil::StepArgs<T> a = stencil::make_step_args(p, u, up), b = stencil::make_step_args(d, du, dup);
  ShotProblem<T> background = p;  // u's traces only where asked for
  if (!p.traces) background.nrec = 0;
  ShotProblem<T> scattered = d;  // δu keeps nothing
  scattered.store = nullptr;
  issue_side<Order>(a, background, sc, e, step, last);
  issue_side<Order>(b, scattered, sc, e, step, last);
  if (last) return;
  const long cells = long(p.nz) * p.ny * p.nx;
  const T* s = scatter + p.origin();  // at cell (0, 0, 0), as the fields
  e.sweep_wide(
      "born update",
      [=] SW_LAMBDA(long t) {
        const int m = step.m();
        if (t == 0) step.move_on(m);
        const unsigned z = a.by_plane_cells.div(unsigned(t)), r = unsigned(t) - z * a.by_plane_cells.d;
        const unsigned y = a.by_nx.div(r);
        born_cell<Order>(a, b, p, s, m, int(z), int(y), int(r - y * a.by_nx.d));
      },
      cells);
}

/// Steps lo … hi − 1 of one shot's Born modelling (cpu::born_steps: lo = 0 starts, hi =
/// nsteps ends, the state kept in p.work and d.work between calls): u's traces (p.traces, if
/// set), store, checkpoints and final state as run_shot_steps keeps them, the Born traces in
/// d.traces. Without checkpoints, runs of 2 × kChunkSteps steps are replayed as one graph
/// (run_shot_steps's); with them, steps are issued one by one. Returns ok().
template <int Order, typename T, typename Exec>
bool run_born_steps(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, int lo, int hi, Exec& ex) {
  if (lo == 0 && (!ex.zero(p.work, p.work_size()) || !ex.zero(d.work, d.work_size()))) return false;
  // Each step before this call swapped both pairs: after lo steps u[lo] is in u1 if lo is odd.
  T* u = lo % 2 == 1 ? p.u1() : p.u0();
  T* up = lo % 2 == 1 ? p.u0() : p.u1();
  T* du = lo % 2 == 1 ? d.u1() : d.u0();
  T* dup = lo % 2 == 1 ? d.u0() : d.u1();
  const StoreCells sc = StoreCells::of(p);
  const bool checkpoints = p.checkpoints && p.reruns();
  auto swap = [](T*& x, T*& y) {
    T* tmp = x;
    x = y;
    y = tmp;
  };
  auto issue_step = [&](Exec& e, Step step, bool last) {
    issue_born_step<Order>(p, d, scatter, sc, u, up, du, dup, e, step, last);
    swap(u, up);  // u, δu now hold u[m+1], δu[m+1]
    swap(du, dup);
  };
  const int replays = checkpoints ? 0 : (hi - lo) / (2 * kChunkSteps);
  replay_steps(p.clocks(), lo, replays, issue_step, ex);
  if (lo == 0 && checkpoints && p.checkpoint_after(0)) save_state(p, u, up, p.checkpoints, "born checkpoint", ex);
  for (int m = lo + 2 * kChunkSteps * replays; m < hi && ex.ok(); ++m) {
    issue_step(ex, Step{nullptr, nullptr, m, 0}, false);
    if (checkpoints && p.checkpoint_after(m + 1))
      save_state(p, u, up, p.checkpoints + std::size_t((m + 2) / p.checkpoint_every - 1) * p.checkpoint_size(),
                 "born checkpoint", ex);
  }
  if (hi < p.nsteps) return ex.ok();
  issue_born_step<Order>(p, d, scatter, sc, u, up, du, dup, ex, Step{nullptr, nullptr, p.nsteps, 0}, true);
  if (p.final_state) {
    copy_grid("born final state", u, p.final_state, p.grid_size(), ex);
    copy_grid("born final state", up, p.final_state + p.grid_size(), p.grid_size(), ex);
  }
  return ex.ok();
}

}  // namespace starwave::cuda_bodies
