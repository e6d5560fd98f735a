// tests/test_mpi_graph.cpp — the graph layer across ranks, in one program run under the
// launcher (starwave_add_mpi_test runs it on 2 and 3 ranks): every rank builds the same
// graph of graph::Data, shots on their owners, the reduction tree's halves sent where they
// merge. A gradient, a mini-batch gradient and an RTM stack must equal, bit for bit, rank
// 0's own computation of them as one process (graph::LocalScope), in 2-D and in 3-D.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "graph/data.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
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

/// A gradient, a 4-shot mini-batch gradient and an RTM stack on this rank count against
/// rank 0 alone, for a marmousi-like model of `ny` rows (0: 2-D).
void expect_every_rank_count_gives_the_one_process_bits(int ny) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.ny = ny;
  so.nz = ny ? 12 : 30;
  so.nx = ny ? 16 : 60;
  so.spacing = ny ? 20 : 10;
  const Model truth = synthesize(so), start = smoothed(truth, ny ? 60 : 80);
  SurveyOptions sv;
  sv.nshots = 7;  // more shots than ranks, not a multiple of 2 or 3
  sv.frequency = ny ? 8 : 15;
  sv.t_max = ny ? 0.3 : 0.5;
  sv.receiver_every = ny ? 3 : 1;
  Survey s = regular_survey(truth, sv);
  NumericalOptions o;
  o.pml_width = ny ? 6 : 10;
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
    const std::string d = ny ? "3-D " : "2-D ";
    expect_same(gradient, misfit_gradient(start, s, o), d + "gradient");
    expect_same(part, misfit_gradient(start, s, o, batch), d + "mini-batch gradient");
    expect_same(rtm, rtm_stack(start, s, o), d + "RTM stack");
  }
}

TEST(MpiGraph, EveryRankCountGivesTheOneProcessBits) {
  mpi::start_if_launched();
  ASSERT_GT(mpi::size(), 1) << "run me under the launcher (ctest does)";
  Runtime rt;
  expect_every_rank_count_gives_the_one_process_bits(0);
  expect_every_rank_count_gives_the_one_process_bits(8);
}

}  // namespace
}  // namespace starwave
