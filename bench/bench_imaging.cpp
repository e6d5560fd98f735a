// bench/bench_imaging.cpp — image quality on the demo's case (scripts/demo: the Marmousi-like
// model, its 100 m smoothing with the water kept as the migration model, 8 shots at 10 Hz):
// RTM under each imaging condition and least-squares RTM after N iterations, each image's
// correlation with the true reflectivity and with the true perturbation below the
// acquisition mute, and LSRTM's data-misfit reduction — on the demo's own data (multiples and
// all) and on Born data of the true perturbation (J δv about the smooth model). The table
// docs/imaging.md quotes. Not a test.   usage: bench_imaging [iterations]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/lsrtm.hpp"
#include "src/workflows/modeling.hpp"

using namespace starwave;

namespace {

/// Correlation of a and b over the cells where `w` > 0.
double correlation(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& w) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (w[i] <= 0) continue;
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

/// (v[z+1] − v[z]) / (v[z+1] + v[z]): the normal-incidence reflectivity below each cell.
std::vector<double> reflectivity(const Model& m) {
  std::vector<double> r(m.cells(), 0.0);
  for (int z = 0; z + 1 < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) {
        const double a = m.vp[m.index(z, y, x)], b = m.vp[m.index(z + 1, y, x)];
        r[m.index(z, y, x)] = (b - a) / (b + a);
      }
  return r;
}

/// ∂/∂z (central, edges replicated).
std::vector<double> depth_derivative(const Model& m, const std::vector<double>& v) {
  std::vector<double> d(v.size());
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x)
        d[m.index(z, y, x)] = v[m.index(std::min(z + 1, m.nz - 1), y, x)] - v[m.index(std::max(z - 1, 0), y, x)];
  return d;
}

void row(const char* what, const std::vector<double>& image, const std::vector<double>& refl,
         const std::vector<double>& dv, const std::vector<double>& w) {
  std::printf("  %s: reflectivity %.3f, dv %.3f\n", what, correlation(image, refl, w), correlation(image, dv, w));
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  SynthOptions so;
  const Model truth = synthesize(so);
  const Model smooth = smoothed(truth, 100, true);
  SurveyOptions sv;
  Survey s = regular_survey(truth, sv);
  NumericalOptions o;
  std::vector<double> dv(truth.cells());
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = truth.vp[i] - smooth.vp[i];
  const std::vector<double> refl = reflectivity(truth);
  const std::vector<double> w = rtm_mute_weights(smooth, s);
  Runtime rt;
  std::printf("demo case: %d × %d cells, %d shots, %d LSRTM iterations, %d CPU workers\n", truth.nz, truth.nx,
              s.nshots(), iterations, rt.cpu_workers());
  for (const bool born : {false, true}) {
    if (born) {  // d = F(v₀) + J δv: what LSRTM should fit exactly
      const std::vector<double> f0 = model_shots_exact(smooth, s, o), j = born_shots_exact(smooth, dv, s, o);
      for (std::size_t i = 0; i < f0.size(); ++i) s.data[i] = float(f0[i] + j[i]);
    } else {
      s.data = model_shots(truth, s, o, nullptr);
    }
    std::printf("%s\n", born ? "Born data J δv (about the smooth model)" : "the demo's data (multiples and all)");
    RtmOptions r;
    r.direct = DirectWave::kModel;
    r.compensation = Compensation::kBoth;  // both sides' illumination summed: each compensation from one stack
    const auto [acquisition, mute] = rtm_mute(smooth, s);
    for (const ImagingCondition c : {ImagingCondition::kCross, ImagingCondition::kLaplacian, ImagingCondition::kIsic}) {
      r.condition = c;
      const ImagingResult stack = rtm_stack(smooth, s, o, {}, r);
      for (const Compensation k : {Compensation::kSource, Compensation::kReceiver, Compensation::kBoth}) {
        const std::vector<double> image =
            finish_rtm_image(smooth, stack.values, compensating_illumination(stack, k), acquisition, mute, c);
        row((std::string("RTM, ") + imaging_condition_name(c) + ", " + compensation_name(k)).c_str(), image, refl, dv,
            w);
        if (c == ImagingCondition::kIsic && k == Compensation::kBoth)
          row("RTM, isic, both, d/dz", depth_derivative(smooth, image), refl, dv, w);
      }
    }
    for (const Compensation k : {Compensation::kSource, Compensation::kBoth}) {
      LsrtmOptions l;
      l.iterations = iterations;
      l.illumination = k;
      const LsrtmResult ls = lsrtm(smooth, s, o, l);
      const std::string by = std::string(", --precondition ") + (k == Compensation::kSource ? "illumination" : "both");
      row(("LSRTM dv" + by).c_str(), ls.image, refl, dv, w);
      row(("LSRTM d(dv)/dz" + by).c_str(), depth_derivative(smooth, ls.image), refl, dv, w);
      if (k == Compensation::kSource) row("RTM J^T b (lsrtm /rtm)", ls.rtm, refl, dv, w);
      std::printf("  LSRTM data misfit%s %.5g → %.5g: %.1f %% left\n", by.c_str(), ls.misfit.front(), ls.misfit.back(),
                  100 * ls.misfit.back() / ls.misfit.front());
    }
  }
  return 0;
}
