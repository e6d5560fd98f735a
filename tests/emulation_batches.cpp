// tests/emulation_batches.cpp — batches of shots (docs/design.md §3, "Shot batches") through
// the emulated CUDA launches: each shot's bits the CPU kernel's for that shot alone, with one
// launch a pass for every shot; modelling, and a gradient's forward and adjoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/subnormals.hpp"
#include "kernels/cuda/bodies.hpp"
#include "tests/cuda_emulation.hpp"
#include "tests/emulation_models.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

/// Four shots of one geometry on ramp_model(three, 13, 9, 17, …): sources and receivers off
/// the nodes, in the layers and at the free surface, 3, 3, 2 and 3 receivers.
Survey batch_survey(bool three) {
  auto at = [&](double z, double y, double x) { return three ? Position{z, y, x} : Position{z, x}; };
  Survey s = point_survey(at(41.3, 40, 63.4), {}, 15, 1e-3, 0.1 * kRecordShare + 0.05, three);
  s.sources = {at(41.3, 40, 63.4), at(3.1, 11.5, 7.2), at(90, 70, 155), at(55, 33.3, 100.5)};
  s.receivers = {{at(12.6, 33.3, 13.1), at(0, 40, 100), at(80, 40, 100)},
                 {at(3.4, 5.5, 150.2), at(60.5, 20, 60), at(60.5, 20, 60)},
                 {at(0, 0, 0), at(120, 80, 160), at(30.7, 44.4, 88.8)},
                 {at(20, 40, 20), at(21, 41, 21), at(22, 42, 22)}};
  s.counts = {3, 3, 2, 3};
  return s;
}

/// A batch of shots of one geometry (cuda_bodies::run_batch): each shot's traces the CPU
/// kernel's bits for that shot alone, with one launch a pass for all of them (the same
/// launches as one shot's); sources and receivers off the nodes, in the layers and under a
/// free surface; a batch that keeps end states runs its shots one by one, the same bits.
template <typename T, int Order>
void expect_batch_matches_shots(int dim, bool free_surface) {
  const bool three = dim == 3;
  const Model m = ramp_model(three, 13, 9, 17, {21, 6, 4}, 29, 41);
  const Survey s = batch_survey(three);
  const NumericalOptions o = options_for<T, Order>(5, free_surface);
  const std::string context =
      std::to_string(dim) + "-D, order " + std::to_string(Order) + ", free surface " + std::to_string(free_surface);
  const int shots = s.nshots();
  std::vector<std::unique_ptr<PreparedShot<T>>> alone, together;
  std::vector<ShotProblem<T>> table;
  for (int b = 0; b < shots; ++b) {
    alone.push_back(prepare_shot<T>(m, s, o, b));
    cpu::forward<Order, T>(alone.back()->p);
    together.push_back(prepare_shot<T>(m, s, o, b));
    table.push_back(together.back()->p);
  }
  ASSERT_GE(table[0].nsteps, 2 * cuda_bodies::kChunkSteps) << "the replayed steps are part of the test";
  const long stride = cuda_bodies::ShotBatch<T>::stride_of(table[0]);
  aligned_vector<T> work(std::size_t(stride) * std::size_t(shots), T(7));
  for (int b = 0; b < shots; ++b) table[std::size_t(b)].work = work.data() + b * stride;
  const cuda_bodies::ShotBatch<T> batch{table.data(), table.data(), shots};
  ASSERT_TRUE(batch.together()) << context;
  EmulatedExec ex, one;
  const cpu::detail::FlushSubnormals<T> as_on_the_device;
  ASSERT_TRUE((cuda_bodies::run_batch<Order>(batch, ex))) << context;
  ASSERT_TRUE((cuda_bodies::run_shot<Order>(alone[0]->p, one))) << context;
  EXPECT_EQ(ex.launches.size(), one.launches.size()) << "one launch a pass for every shot, " << context;
  for (int b = 0; b < shots; ++b) {
    const auto& want = alone[std::size_t(b)]->traces;
    const auto& got = together[std::size_t(b)]->traces;
    ASSERT_GT(norm(std::vector<double>(want.begin(), want.end())), 0) << context;
    EXPECT_TRUE(same_bits(want, got)) << "shot " << b << ", " << context << ", first difference at "
                                      << first_difference(want, got);
  }
  // A batch whose shots keep their end states: one after another, each its own bits.
  std::vector<aligned_vector<T>> states(std::size_t(shots), aligned_vector<T>{});
  for (int b = 0; b < shots; ++b) {
    std::fill(together[std::size_t(b)]->traces.begin(), together[std::size_t(b)]->traces.end(), T(0));
    states[std::size_t(b)].assign(table[std::size_t(b)].checkpoint_size(), T(0));
    table[std::size_t(b)].end_state = states[std::size_t(b)].data();
  }
  ASSERT_FALSE(batch.together());
  ASSERT_TRUE((cuda_bodies::run_batch<Order>(batch, ex))) << context;
  for (int b = 0; b < shots; ++b)
    EXPECT_TRUE(same_bits(alone[std::size_t(b)]->traces, together[std::size_t(b)]->traces))
        << "shot " << b << " one by one, " << context;
}

TEST(CudaEmulation, ShotBatchesGiveEachShotItsOwnBits) {
  for (bool fs : {false, true}) {
    expect_batch_matches_shots<float, 8>(2, fs);
    expect_batch_matches_shots<double, 4>(2, fs);
    expect_batch_matches_shots<float, 8>(3, fs);
  }
  expect_batch_matches_shots<double, 2>(3, true);
}

/// A gradient's batches (cuda_bodies::run_batch with stores, run_adjoint_batch): each shot's
/// traces, store, final state, correlation and illumination the CPU kernel's bits for that
/// shot alone, the backward steps' launches one a pass for every shot.
template <typename T, int Order>
void expect_gradient_batch_matches_shots(int dim, bool free_surface, int storage, int compression, ImageSums sums) {
  const bool three = dim == 3;
  const Model m = ramp_model(three, 13, 9, 17, {21, 6, 4}, 29, 41);
  const Survey s = batch_survey(three);
  const NumericalOptions o = options_for<T, Order>(5, free_surface);
  const std::string context = std::to_string(dim) + "-D, order " + std::to_string(Order) + ", free surface " +
                              std::to_string(free_surface) + ", storage " + std::to_string(storage) + ", compression " +
                              std::to_string(compression) + ", receiver illumination " +
                              std::to_string(sums.receiver_illumination) + ", ISIC " + std::to_string(sums.isic);
  const int shots = s.nshots();
  struct Kept {
    std::unique_ptr<PreparedShot<T>> shot;
    aligned_vector<T> store, final_state;
    std::vector<T> residual, corr, illum;
  };
  auto prepare = [&](int b) {
    Kept k{prepare_shot<T>(m, s, o, b), {}, {}, {}, {}, {}};
    ShotProblem<T>& p = k.shot->p;
    p.storage = storage;
    p.compression = compression;
    static_cast<ImageSums&>(p) = sums;
    k.store.assign(p.store_size(), T(0));
    k.final_state.assign(2 * p.grid_size(), T(0));
    p.store = k.store.data();
    p.final_state = k.final_state.data();
    k.corr.assign(std::size_t(p.model_cells()), T(0));
    k.illum.assign(std::size_t(p.model_cells() * p.illumination_sums()), T(0));
    return k;
  };
  std::vector<Kept> alone, together;
  std::vector<ShotProblem<T>> table;
  for (int b = 0; b < shots; ++b) {
    alone.push_back(prepare(b));
    ShotProblem<T>& p = alone.back().shot->p;
    alone.back().shot->work.assign(p.adjoint_work_size(), T(0));
    p.work = alone.back().shot->work.data();
    cpu::forward<Order, T>(p);
    alone.back().residual.assign(alone.back().shot->traces.begin(), alone.back().shot->traces.end());
    cpu::adjoint<Order, T>(p, alone.back().residual.data(), alone.back().corr.data(), alone.back().illum.data(),
                           nullptr);
    together.push_back(prepare(b));
    table.push_back(together.back().shot->p);
  }
  const long stride = cuda_bodies::ShotBatch<T>::stride_of(table[0]);
  aligned_vector<T> work(std::size_t(stride) * std::size_t(shots), T(7));
  for (int b = 0; b < shots; ++b) table[std::size_t(b)].work = work.data() + b * stride;
  const cuda_bodies::ShotBatch<T> batch{table.data(), table.data(), shots};
  ASSERT_TRUE(batch.together()) << context;
  EmulatedExec ex, adjoint, one;
  const cpu::detail::FlushSubnormals<T> as_on_the_device;
  ASSERT_TRUE((cuda_bodies::run_batch<Order>(batch, ex))) << context;
  std::vector<AdjointShot<T>> images;
  const long adjoint_stride = cuda_bodies::AdjointBatch<T>::stride_of(table[0]);
  aligned_vector<T> adjoint_work(std::size_t(adjoint_stride) * std::size_t(shots), T(7));
  for (int b = 0; b < shots; ++b) {
    const Kept& want = alone[std::size_t(b)];
    Kept& got = together[std::size_t(b)];
    const std::string shot = "shot " + std::to_string(b) + ", " + context;
    EXPECT_TRUE(same_bits(want.shot->traces, got.shot->traces)) << shot;
    EXPECT_TRUE(same_bits(want.store, got.store))
        << "store, " << shot << ", " << first_difference(want.store, got.store);
    EXPECT_TRUE(same_bits(want.final_state, got.final_state)) << "final state, " << shot;
    ShotProblem<T> p = table[std::size_t(b)];
    p.work = adjoint_work.data() + b * adjoint_stride;
    images.push_back({p, want.residual.data(), got.corr.data(), got.illum.data()});
  }
  const cuda_bodies::AdjointBatch<T> backward{images.data(), images.data(), shots};
  ASSERT_TRUE(backward.together()) << context;
  ASSERT_TRUE((cuda_bodies::run_adjoint_batch<Order>(backward, adjoint))) << context;
  for (int b = 0; b < shots; ++b) {
    const Kept& want = alone[std::size_t(b)];
    const Kept& got = together[std::size_t(b)];
    ASSERT_GT(norm(std::vector<double>(want.corr.begin(), want.corr.end())), 0) << context;
    EXPECT_TRUE(same_bits(want.corr, got.corr))
        << "correlation, shot " << b << ", " << context << ", " << first_difference(want.corr, got.corr);
    EXPECT_TRUE(same_bits(want.illum, got.illum))
        << "illumination, shot " << b << ", " << context << ", " << first_difference(want.illum, got.illum);
  }
  // The backward steps' launches: one a pass for every shot (one shot's count of them).
  ShotProblem<T> q = images[0].p;
  std::vector<T> corr(images[0].p.model_cells()), illum(images[0].p.model_cells() * q.illumination_sums());
  ASSERT_TRUE((cuda_bodies::run_adjoint<Order>(q, images[0].residual, corr.data(), illum.data(), one))) << context;
  auto count = [](const std::vector<std::string>& names, const std::string& part) {
    return std::count_if(names.begin(), names.end(),
                         [&](const std::string& n) { return n.find(part) != std::string::npos; });
  };
  for (const char* pass : {"adjoint image", "adjoint alpha", "adjoint mu"})
    EXPECT_EQ(count(adjoint.launches, pass), count(one.launches, pass)) << pass << ", " << context;
  EXPECT_EQ(count(adjoint.launches, "shots together"), count(one.launches, "adjoint image") * 3) << context;
}

TEST(CudaEmulation, GradientBatchesGiveEachShotItsOwnBits) {
  using P = ShotProblem<float>;
  for (bool fs : {false, true}) {
    expect_gradient_batch_matches_shots<float, 8>(2, fs, P::kStoreBoundary, pack16::kNone, {});
    expect_gradient_batch_matches_shots<double, 4>(2, fs, P::kStoreFull, pack16::kNone, {true, false});
    expect_gradient_batch_matches_shots<float, 8>(3, fs, P::kStoreShell, pack16::kHalf, {false, true});
  }
  expect_gradient_batch_matches_shots<float, 4>(2, true, P::kStoreBoundary, pack16::kBfloat, {true, true});
  expect_gradient_batch_matches_shots<double, 2>(3, false, P::kStoreBoundary, pack16::kNone, {true, false});
}

}  // namespace
}  // namespace starwave::test
