// bench/bench_kernel.cpp — the CPU propagator alone (no StarPU) on docs/design.md §8's reference
// case: one shot, one core. Prints the shot's throughput from rest (every cell of every step
// counted, the rows still at rest skipped: kernels/live_rows.hpp), and with every row swept
// from the first step (a start from a state of 1e-20 everywhere): its throughput, with no
// absorbing layers (interior loop only) and, from the two, the cost of a layer cell.
// Not a test: a tool for tuning kernels/cpu.   usage: bench_kernel [steps] [reps] [pml] [3d [tile]]
// (3d: docs/design.md §8's 3-D reference case, 160³ cells at 10 m, instead of the 2-D one; tile:
// rows of its y-tiles, 0 = sized for the cache as the engine does).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/reference_case.hpp"
#include "kernels/cpu/levels.hpp"
#include "kernels/cpu/propagate.hpp"
#include "src/runtime/runtime.hpp"
#include "tests/helpers.hpp"  // prepare_shot(): one shot's arrays for a direct kernel run

using namespace starwave;

namespace {

struct Result {
  double seconds;
  double cells;  // cell updates of the whole run, layer cells included
  double share;  // of the rows × steps, those the steps swept
};

/// `swept`: every row swept from the first step (a start from u = u_prev = 1e-20 everywhere).
Result run(int pml, int steps, int reps, bool three_d, int tile, bool swept) {
  const Model m = three_d ? bench::reference_model_3d() : bench::reference_model();
  NumericalOptions o;
  o.order = 8;
  o.pml_width = pml;
  const Survey s = three_d ? bench::reference_survey_3d(m, 1, steps) : bench::reference_survey(m, 1, steps);
  auto shot = test::prepare_shot<float>(m, s, o);
  ShotProblem<float> p = shot->p;
  p.tile_rows = tile;
  std::vector<float> start;
  if (swept) {
    start.assign(p.checkpoint_size(), 0.0f);
    state::for_each_run(p, [&](std::size_t k, int array, long, int n, int, int z, int, int) {
      if (array <= state::kUPrev && z >= 0) std::fill_n(start.begin() + long(k), n, 1e-20f);
    });
    p.initial_state = start.data();
  }
  long long swept_rows = 0;
  p.swept_rows = &swept_rows;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    swept_rows = 0;
    const double t0 = bench::now();
    cpu::forward<8, float>(p);
    t.push_back(bench::now() - t0);
  }
  std::sort(t.begin(), t.end());
  const double rows = double(p.nz) * p.ny * p.nsteps;
  return {t[t.size() / 2], rows * p.nx, double(swept_rows) / rows};
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int pml = argc > 3 ? std::atoi(argv[3]) : 20;
  const bool three_d = argc > 4 && std::string(argv[4]) == "3d";
  const int tile = argc > 5 ? std::atoi(argv[5]) : 0;
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  const Result rest = run(pml, steps, reps, three_d, tile, false);
  const Result full = run(pml, steps, reps, three_d, tile, true);
  const Result bare = run(0, steps, reps, three_d, tile, true);
  const double layer_cells = full.cells - bare.cells;
  const double layer_seconds = full.seconds - bare.seconds;  // the interior cells are the same
  std::printf("%s reference case, order 8, float32, %d steps, one core, median of %d, CPU kernels: %s\n",
              three_d ? "3-D" : "2-D", steps, reps, Runtime::cpu_kernels().c_str());
  if (three_d) {
    ShotProblem<float> q;
    q.set_grid(160 + 2 * pml, 160 + 2 * pml, 160 + 2 * pml, 4, 3);
    q.tile_rows = tile;
    std::printf("  y-tiles of %d rows\n", q.y_tile());
  }
  std::printf("  from rest:    %.3f s  %.3f G cells/s (PML %d; the rows at rest skipped: %.0f %% swept)\n",
              rest.seconds, rest.cells / rest.seconds / 1e9, pml, 100 * rest.share);
  std::printf("  with PML %d:  %.3f s  %.3f G cells/s (every row swept)\n", pml, full.seconds,
              full.cells / full.seconds / 1e9);
  std::printf("  no layers:    %.3f s  %.3f G cells/s (interior loop)\n", bare.seconds,
              bare.cells / bare.seconds / 1e9);
  std::printf("  layer cells:  %.3f G cells/s (their extra time over the interior)\n",
              layer_cells / layer_seconds / 1e9);
  return 0;
}
