// bench/bench_born.cpp — what the Born modelling J of one shot costs against its forward F,
// on docs/design.md §8's reference case (2-D, or 3-D with `3d`): one shot, one core, the
// CPU kernels alone (no StarPU), float32, order 8. Prints the median of each and their ratio,
// the figure docs/imaging.md quotes (J's goal: ≤ 2.2 forwards). Not a test.
// usage: bench_born [steps] [reps] [3d] [pml] (pml: the absorbing layers' width, 20 by default;
// 0 measures the two fields' interiors alone)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/reference_case.hpp"
#include "kernels/cpu/born.hpp"
#include "kernels/cpu/levels.hpp"
#include "kernels/cpu/propagate.hpp"
#include "src/numerics/propagator.hpp"
#include "src/runtime/runtime.hpp"
#include "tests/helpers.hpp"  // prepare_shot(): one shot's arrays for a direct kernel run

using namespace starwave;

namespace {

template <typename F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = bench::now();
    f();
    t.push_back(bench::now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool three_d = argc > 3 && std::string(argv[3]) == "3d";
  const int pml = argc > 4 ? std::atoi(argv[4]) : 20;
  if (pml < 0) {
    std::fprintf(stderr, "bench_born: pml must be 0 or more, got %s\n", argv[4]);
    return 2;
  }
  if (const std::string why = cpu::choose_level_from_environment(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  const Model m = three_d ? bench::reference_model_3d() : bench::reference_model();
  NumericalOptions o;
  o.order = 8;
  o.pml_width = pml;
  const Survey s = three_d ? bench::reference_survey_3d(m, 1, steps) : bench::reference_survey(m, 1, steps);
  auto bg = test::prepare_shot<float>(m, s, o);
  // δu as the born codelet steps it (codelets/born.cpp): the background's problem, medium
  // and points, its work arrays after u's in one buffer, traces of its own.
  aligned_vector<float> work(2 * std::size_t(bg->p.work_size()));
  std::vector<float> li_traces(bg->traces.size());
  bg->p.work = work.data();
  ShotProblem<float> li = bg->p;
  li.work = work.data() + bg->p.work_size();
  li.traces = li_traces.data();
  std::vector<double> dv(m.vp.size());
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = 20 * std::sin(0.37 * double(i));
  const std::vector<float> scatter = born_scatter(bg->p, m, dv);
  std::vector<float> scratch(std::size_t(bg->p.stride));
  const double f = median_seconds(reps, [&] { cpu::forward<8, float>(bg->p); });
  const double j = median_seconds(reps, [&] { cpu::born<8, float>(bg->p, li, scatter.data(), scratch.data()); });
  std::printf("%s reference case, order 8, float32, %d steps, PML %d, one core, median of %d, CPU kernels: %s\n",
              three_d ? "3-D" : "2-D", steps, pml, reps, Runtime::cpu_kernels().c_str());
  std::printf("  forward F:  %.3f s\n  Born J:     %.3f s  = %.2f forwards\n", f, j, j / f);
  return 0;
}
