// tests/test_runtime.cpp — the task graph on StarPU: traces bit-for-bit identical whatever
// the number of CPU workers and the scheduler, equal to the kernel run directly, and
// bounded submission with many more shots than workers; the buffers StarPU allocates.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/host_memory.hpp"
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

namespace starwave::test {
namespace {

/// The VmFlags of the mapping that holds `p` (/proc/self/smaps), "" if none does.
std::string vm_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = at >= lo && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(HostMemory, LargeBuffersAreHugePageMappingsKeptForTheNextShot) {
  using namespace host_memory;
  const bool thp = std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled");
  void* a = nullptr;
  const std::size_t big = 5 * (std::size_t(1) << 20) + 123;
  ASSERT_EQ(allocate(0, &a, big, 0), 0);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kHugePage, 0u) << "aligned for huge pages";
  if (thp) {
    EXPECT_NE(vm_flags(a).find(" hg"), std::string::npos) << "advised for huge pages: " << vm_flags(a);
  }
  std::memset(a, 1, big);  // every byte is usable
  ASSERT_EQ(release(0, a, big, 0), 0);
  void* again = nullptr;  // the next shot's buffer of the same size: the kept mapping
  ASSERT_EQ(allocate(0, &again, big, 0), 0);
  EXPECT_EQ(again, a);
  // A buffer between kMappedFrom and kHugeFrom: a mapping of its own, not advised.
  void* mid = nullptr;
  const std::size_t mid_size = kMappedFrom + 4096 * 3 + 5;
  ASSERT_EQ(allocate(0, &mid, mid_size, 0), 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mid) % 4096, 0u);
  EXPECT_EQ(vm_flags(mid).find(" hg"), std::string::npos) << vm_flags(mid);
  std::memset(mid, 2, mid_size);
  // A small buffer: from the heap, 64-byte aligned like the kernels' rows.
  void* small = nullptr;
  ASSERT_EQ(allocate(0, &small, 1000, 0), 0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 64, 0u);
  std::memset(small, 3, 1000);
  ASSERT_EQ(release(0, small, 1000, 0), 0);
  ASSERT_EQ(release(0, mid, mid_size, 0), 0);
  // Both kept mappings wait for a buffer of their size; a request that neither fits
  // releases them (what is kept never adds to the peak): their pages are gone — unless
  // the new mapping took their place, which shows the same.
  ASSERT_EQ(release(0, again, big, 0), 0);
  void* other = nullptr;
  const std::size_t other_size = 3 * big;
  ASSERT_EQ(allocate(0, &other, other_size, 0), 0);
  for (auto [p, n] : {std::pair{a, big}, std::pair{mid, mid_size}}) {
    const auto lo = reinterpret_cast<std::uintptr_t>(p), o = reinterpret_cast<std::uintptr_t>(other);
    const bool reused_by_other = lo < o + other_size && o < lo + n;
    unsigned char resident[4] = {};
    errno = 0;
    const int got = mincore(p, 4096, resident);
    EXPECT_TRUE(reused_by_other || (got == -1 && errno == ENOMEM))
        << "a kept mapping outlived a request it did not fit";
  }
  ASSERT_EQ(release(0, other, other_size, 0), 0);
}

}  // namespace
}  // namespace starwave::test
