// bench/bench_kernel.cpp — the CPU propagator alone (no StarPU) on DESIGN §8's reference
// case: one shot, one core. Prints the whole-grid throughput, the throughput with no
// absorbing layers (interior loop only) and, from the two, the cost of a layer cell.
// Not a test: a tool for tuning kernels/cpu.   usage: bench_kernel [steps] [reps] [pml]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/propagate.hpp"
#include "src/aligned.hpp"
#include "src/propagator.hpp"
#include "src/survey.hpp"

using namespace starwave;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Result {
  double seconds;
  double cells;  // per step, layers included
};

Result run(int pml, int steps, int reps) {
  Model m;
  m.nz = 600;
  m.nx = 250;
  m.dz = m.dx = 4;
  m.vp.resize(std::size_t(m.nz) * m.nx);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1500 + 2500.0 * z / (m.nz - 1);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = pml;
  Survey s;
  s.dt = 0.9 * stable_time_step(m.vmax(), m.dz, m.dx, 8);
  s.nt = steps + 1;
  s.sources = {{8.0, 500.0}};
  s.receivers.emplace_back();
  for (int x = 0; x < m.nx; ++x) s.receivers[0].push_back({8.0, 4.0 * x});
  s.wavelets = {ricker(25, 1.5 / 25, s.dt, s.nt)};

  const TimeStepping ts = choose_time_step(m, s, o);
  Medium<float> med = build_medium<float>(m, o, ts, int(s.nt), 25);
  ShotInputs<float> in = shot_inputs(med, m, s, ts, 0);
  ShotProblem<float> p = med.layout;
  med.attach(p, med.buffer.data());
  aligned_vector<float> work(p.work_size());
  std::vector<float> traces(std::size_t(s.nrec()) * s.nt);
  p.work = work.data();
  p.traces = traces.data();
  p.source = in.source.data();
  p.source_index = in.nodes[0];
  p.receiver_index = in.nodes.data() + 1;
  p.nrec = s.nrec();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    cpu::forward<8, float>(p);
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], double(p.nz) * p.nx * ts.nsteps};
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int pml = argc > 3 ? std::atoi(argv[3]) : 20;
  const Result full = run(pml, steps, reps);
  const Result bare = run(0, steps, reps);
  const double layer_cells = full.cells - bare.cells;
  const double layer_seconds = full.seconds - bare.seconds;  // the interior cells are the same
  std::printf("reference case, order 8, float32, %d steps, one core, median of %d\n", steps, reps);
  std::printf("  with PML %d:  %.3f s  %.3f G cells/s\n", pml, full.seconds, full.cells / full.seconds / 1e9);
  std::printf("  no layers:    %.3f s  %.3f G cells/s (interior loop)\n", bare.seconds,
              bare.cells / bare.seconds / 1e9);
  std::printf("  layer cells:  %.3f G cells/s (their extra time over the interior)\n",
              layer_cells / layer_seconds / 1e9);
  return 0;
}
