// tests/test_runtime.cpp — the task graph on StarPU: traces bit-for-bit identical whatever
// the number of CPU workers and the scheduler, equal to the kernel run directly, and
// bounded submission with many more shots than workers.
#include <gtest/gtest.h>

#include <cstring>

#include "src/runtime.hpp"
#include "src/synth.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

struct Case {
  Model model;
  Survey survey;
  NumericalOptions options;
};

Case small_case(bool double_precision) {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 40;
  so.nx = 90;
  so.spacing = 10;
  Case c{synthesize(so), {}, {}};
  SurveyOptions sv;
  sv.nshots = 7;  // more shots than workers: the submission window is exercised
  sv.receiver_every = 3;
  sv.frequency = 12;
  sv.dt = 2e-3;  // larger than the stable step: internal resampling (k > 1)
  sv.t_max = 0.5;
  c.survey = regular_survey(c.model, sv);
  c.options.order = 8;
  c.options.double_precision = double_precision;
  return c;
}

std::vector<float> run_with(const Case& c, int ncpus, const std::string& sched) {
  RuntimeOptions ro;
  ro.ncpus = ncpus;
  ro.ncuda = 0;
  ro.scheduler = sched;
  Runtime rt(ro);
  EXPECT_EQ(rt.cpu_workers(), ncpus);
  EXPECT_EQ(rt.scheduler(), sched);
  return model_shots(c.model, c.survey, c.options, nullptr);
}

TEST(Runtime, TracesBitForBitAcrossWorkersAndSchedulers) {
  const Case c = small_case(false);
  const std::vector<float> ref = run_with(c, 1, "eager");
  ASSERT_EQ(ref.size(), std::size_t(c.survey.nshots()) * c.survey.nrec() * c.survey.nt);
  float peak = 0;
  for (float v : ref) peak = std::max(peak, std::abs(v));
  ASSERT_GT(peak, 0.f);
  for (const auto& [ncpus, sched] :
       std::vector<std::pair<int, std::string>>{{2, "eager"}, {1, "lws"}, {2, "lws"}, {1, "dmda"}, {2, "dmda"}}) {
    const std::vector<float> d = run_with(c, ncpus, sched);
    ASSERT_EQ(d.size(), ref.size());
    EXPECT_EQ(std::memcmp(d.data(), ref.data(), ref.size() * sizeof(float)), 0)
        << ncpus << " CPU workers, scheduler " << sched;
  }
}

TEST(Runtime, TaskResultEqualsDirectKernelRunInDouble) {
  const Case c = small_case(true);
  const std::vector<float> d = run_with(c, 2, "dmda");
  const int nrec = c.survey.nrec(), nt = int(c.survey.nt);
  for (int shot : {0, 3, 6}) {
    const std::vector<double> direct = run_shot<double>(c.model, c.survey, c.options, shot);
    for (int i = 0; i < nrec * nt; ++i)
      ASSERT_EQ(d[std::size_t(shot) * nrec * nt + std::size_t(i)], float(direct[std::size_t(i)])) << "shot " << shot;
  }
}

}  // namespace
}  // namespace starwave::test
