// tests/test_mpi_graph.cpp — the graph layer across ranks, in one program run under the
// launcher (starwave_add_mpi_test runs it on 2 and 3 ranks): every rank builds the same
// graph of graph::Data, shots on their owners, the reduction tree's halves sent where they
// merge. A gradient, a mini-batch gradient and an RTM stack must equal, bit for bit, rank
// 0's own computation of them as one process (graph::LocalScope).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "codelets/distribution.hpp"
#include "src/runtime.hpp"
#include "src/synth.hpp"
#include "src/workflows/imaging.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave {
namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void expect_same(const ImagingResult& got, const ImagingResult& want, const std::string& what) {
  EXPECT_TRUE(same_bits(got.values, want.values)) << what << ": values";
  EXPECT_TRUE(same_bits(got.illumination, want.illumination)) << what << ": illumination";
  EXPECT_EQ(std::memcmp(&got.misfit, &want.misfit, sizeof(double)), 0) << what << ": misfit";
  double peak = 0;
  for (double v : want.values) peak = std::max(peak, std::abs(v));
  EXPECT_GT(peak, 0) << what;
}

TEST(MpiGraph, EveryRankCountGivesTheOneProcessBits) {
  mpi::start_if_launched();
  ASSERT_GT(mpi::size(), 1) << "run me under the launcher (ctest does)";
  Runtime rt;
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 30;
  so.nx = 60;
  so.spacing = 10;
  const Model truth = synthesize(so), start = smoothed(truth, 80);
  SurveyOptions sv;
  sv.nshots = 7;  // more shots than ranks, not a multiple of 2 or 3
  sv.frequency = 15;
  sv.t_max = 0.5;
  Survey s = regular_survey(truth, sv);
  NumericalOptions o;
  o.pml_width = 10;
  {
    const graph::LocalScope alone;  // every rank models every shot itself: its observed data
    s.data = model_shots(truth, s, o, nullptr);
  }

  const ImagingResult gradient = misfit_gradient(start, s, o);
  GradientHooks batch;
  batch.shots = {1, 2, 4, 6};
  const ImagingResult part = misfit_gradient(start, s, o, batch);
  const ImagingResult rtm = rtm_stack(start, s, o);
  if (mpi::rank() == 0) {
    const graph::LocalScope alone;
    expect_same(gradient, misfit_gradient(start, s, o), "gradient");
    expect_same(part, misfit_gradient(start, s, o, batch), "mini-batch gradient");
    expect_same(rtm, rtm_stack(start, s, o), "RTM stack");
  }
}

}  // namespace
}  // namespace starwave
