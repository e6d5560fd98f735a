// tests/emulation_compare_impl.hpp — the definitions of tests/emulation_compare.hpp, included
// by the files that instantiate them (emulation_compare_float.cpp, emulation_compare_double.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/subnormals.hpp"  // the device flushes float subnormals (nvcc -ftz=true)
#include "tests/cuda_emulation.hpp"
#include "tests/emulation_compare.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {

/// Runs shot 0 with the CPU kernel and with the emulated CUDA launches: the same bits.
/// Pieces [lo, hi) of a shot's nsteps forward steps: the first 5, to N/3, to N − 1, the last.
inline std::vector<std::pair<int, int>> forward_pieces(int n) {
  const int c1 = std::min(5, n), c2 = std::min(n, std::max(n / 3, c1)), c3 = std::max(c2, n - 1);
  const int cuts[] = {0, c1, c2, c3, n};
  std::vector<std::pair<int, int>> pieces;
  for (int k = 0; k + 1 < 5; ++k)
    if (cuts[k] < cuts[k + 1]) pieces.emplace_back(cuts[k], cuts[k + 1]);
  return pieces;
}

template <typename T, int Order>
void expect_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o,
                                  const std::string& context, LaunchShape shape) {
  auto cpu = prepare_shot<T>(m, s, o);
  cpu::forward<Order, T>(cpu->p);
  auto emu = prepare_shot<T>(m, s, o);
  shape.set(emu->p);
  EmulatedExec ex;
  const cpu::detail::FlushSubnormals<T> as_on_the_device;
  ASSERT_TRUE((cuda_bodies::run_shot<Order>(emu->p, ex)));
  const std::size_t n = cpu->traces.size();
  ASSERT_GT(norm(std::vector<double>(cpu->traces.begin(), cpu->traces.end())), 0) << context;
  EXPECT_TRUE(same_bits(cpu->traces.data(), emu->traces.data(), n))
      << "traces, order " << Order << ", " << context << ", first difference at "
      << first_difference(cpu->traces.data(), emu->traces.data(), n);
  // In pieces, the state kept in p.work between them: the CPU kernel and the emulated launches.
  auto split_cpu = prepare_shot<T>(m, s, o);
  auto split_emu = prepare_shot<T>(m, s, o);
  shape.set(split_emu->p);
  for (const auto& [lo, hi] : forward_pieces(cpu->p.nsteps)) {
    cpu::forward_steps<Order, T>(split_cpu->p, lo, hi);
    ASSERT_TRUE((cuda_bodies::run_shot_steps<Order>(split_emu->p, lo, hi, ex)));
  }
  for (const auto* split : {&split_cpu->traces, &split_emu->traces})
    EXPECT_TRUE(same_bits(cpu->traces.data(), split->data(), n))
        << "traces in pieces (" << (split == &split_cpu->traces ? "CPU" : "emulated") << "), order " << Order << ", "
        << context << ", first difference at " << first_difference(cpu->traces.data(), split->data(), n);
}

/// The adjoint of shot 0 (residual = its traces) through cpu::adjoint and through the
/// emulated CUDA launches, each after its own forward with a `storage` store: the same
/// bits in the correlation, the illumination, the store and the final state.
template <typename T, int Order>
void expect_adjoint_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o, int storage,
                                          const std::string& context, LaunchShape shape, int checkpoint_every,
                                          int compression, ImageSums sums) {
  std::vector<T> corr[2], illum[2], pieces[2];  // pieces: the emulated adjoint in pieces
  aligned_vector<T> store[2], final_state[2], checkpoints[2];
  std::vector<T> split_corr[2], split_illum[2];  // with a split store (when checkpoint_every cuts the steps)
  std::vector<aligned_vector<T>> split_store[2];
  for (int emulated : {0, 1}) {
    auto ps = prepare_shot<T>(m, s, o);
    ShotProblem<T>& p = ps->p;
    p.storage = storage;
    shape.set(p);
    p.checkpoint_every = checkpoint_every;
    p.compression = compression;
    static_cast<ImageSums&>(p) = sums;
    ps->work.assign(p.adjoint_work_size(), T(0));
    p.work = ps->work.data();
    store[emulated].assign(p.store_size(), T(0));
    final_state[emulated].assign(2 * p.grid_size(), T(0));
    checkpoints[emulated].assign(p.checkpoints_size(), T(0));
    p.store = store[emulated].data();
    p.final_state = final_state[emulated].data();
    p.checkpoints = checkpoints[emulated].data();
    const std::size_t region = std::size_t(p.model_cells());
    corr[emulated].assign(region, T(0));
    illum[emulated].assign(region * std::size_t(sums.illumination_sums()), T(0));
    EmulatedExec ex;
    const cpu::detail::FlushSubnormals<T> as_on_the_device;
    if (emulated) {
      ASSERT_TRUE((cuda_bodies::run_shot<Order>(p, ex)));
      ASSERT_TRUE((cuda_bodies::run_adjoint<Order>(p, ps->traces.data(), corr[1].data(), illum[1].data(), ex)));
      // Again in pieces (the state kept in p.work between them): steps N − 1 alone, then
      // down to 2N/3, to 5, to 0 — across replayed chunks and checkpoint intervals — after
      // the forward again (an adjoint with checkpoints leaves the ring holding interval 0).
      for (const auto& [lo, hi] : forward_pieces(p.nsteps))
        ASSERT_TRUE((cuda_bodies::run_shot_steps<Order>(p, lo, hi, ex)));
      const int n = p.nsteps, c2 = std::min(n - 1, std::max(2 * n / 3, 5)), c3 = std::min(c2, 5);
      const int cuts[] = {n, n - 1, c2, c3, 0};
      pieces[0].assign(region, T(0));
      pieces[1].assign(region * std::size_t(sums.illumination_sums()), T(0));
      for (int k = 0; k + 1 < 5; ++k) {
        if (cuts[k] == cuts[k + 1]) continue;
        ASSERT_TRUE((cuda_bodies::run_adjoint_steps<Order>(p, ps->traces.data(), cuts[k], cuts[k + 1], pieces[0].data(),
                                                           pieces[1].data(), ex)));
      }
    } else {
      cpu::forward<Order, T>(p);
      cpu::adjoint<Order, T>(p, ps->traces.data(), corr[0].data(), illum[0].data(), nullptr);
    }
    if (checkpoint_every > 0 && checkpoint_every < p.nsteps) {  // every slot kept, an interval a buffer
      const std::vector<T> residual = ps->traces;
      split_corr[emulated].assign(region, T(0));
      split_illum[emulated].assign(region * std::size_t(sums.illumination_sums()), T(0));
      T* c = split_corr[emulated].data();
      T* i = split_illum[emulated].data();
      if (emulated)
        split_store[1] = run_split_store(
            p,
            [&](const ShotProblem<T>& q, int lo, int hi) {
              ASSERT_TRUE((cuda_bodies::run_shot_steps<Order>(q, lo, hi, ex)));
            },
            [&](const ShotProblem<T>& q, int hi, int lo) {
              ASSERT_TRUE((cuda_bodies::run_adjoint_steps<Order>(q, residual.data(), hi, lo, c, i, ex)));
            });
      else
        split_store[0] = run_split_store(
            p, [](const ShotProblem<T>& q, int lo, int hi) { cpu::forward_steps<Order, T>(q, lo, hi); },
            [&](const ShotProblem<T>& q, int hi, int lo) {
              cpu::adjoint_steps<Order, T>(q, residual.data(), hi, lo, c, i, nullptr);
            });
    }
  }
  const std::string what = "order " + std::to_string(Order) + ", storage " + std::to_string(storage) +
                           (checkpoint_every > 0 ? ", checkpoints every " + std::to_string(checkpoint_every) : "") +
                           (compression ? std::string(", store ") + compression_name(compression) : "") +
                           (sums.receiver_illumination ? ", receiver illumination" : "") + (sums.isic ? ", ISIC" : "") +
                           ", " + context;
  if (!checkpoints[0].empty()) {
    EXPECT_TRUE(same_bits(checkpoints[0].data(), checkpoints[1].data(), checkpoints[0].size()))
        << "checkpoints, " << what << ", first difference at "
        << first_difference(checkpoints[0].data(), checkpoints[1].data(), checkpoints[0].size());
  }
  EXPECT_TRUE(same_bits(store[0].data(), store[1].data(), store[0].size()))
      << "store, " << what << ", first difference at "
      << first_difference(store[0].data(), store[1].data(), store[0].size());
  ASSERT_EQ(split_store[0].size(), split_store[1].size()) << what;
  for (std::size_t j = 0; j < split_store[0].size(); ++j)
    EXPECT_TRUE(same_bits(split_store[0][j].data(), split_store[1][j].data(), split_store[0][j].size()))
        << "split store, interval " << j << ", " << what << ", first difference at "
        << first_difference(split_store[0][j].data(), split_store[1][j].data(), split_store[0][j].size());
  for (int e : {0, 1}) {  // the CPU's and the emulated split store: the whole store's bits
    if (split_corr[e].empty()) continue;
    EXPECT_TRUE(same_bits(corr[0].data(), split_corr[e].data(), corr[0].size()))
        << "correlation, split store (" << (e ? "emulated" : "CPU") << "), " << what << ", first difference at "
        << first_difference(corr[0].data(), split_corr[e].data(), corr[0].size());
    EXPECT_TRUE(same_bits(illum[0].data(), split_illum[e].data(), illum[0].size()))
        << "illumination, split store (" << (e ? "emulated" : "CPU") << "), " << what << ", first difference at "
        << first_difference(illum[0].data(), split_illum[e].data(), illum[0].size());
  }
  for (auto* field : {corr, illum}) {
    ASSERT_GT(norm(std::vector<double>(field[0].begin(), field[0].end())), 0) << what;
    EXPECT_TRUE(same_bits(field[0].data(), field[1].data(), field[0].size()))
        << (field == corr ? "correlation, " : "illumination, ") << what << ", first difference at "
        << first_difference(field[0].data(), field[1].data(), field[0].size());
    const std::vector<T>& split = pieces[field == corr ? 0 : 1];
    EXPECT_TRUE(same_bits(field[0].data(), split.data(), field[0].size()))
        << (field == corr ? "correlation in pieces, " : "illumination in pieces, ") << what << ", first difference at "
        << first_difference(field[0].data(), split.data(), field[0].size());
  }
}

}  // namespace starwave::test

/// Instantiates both comparisons for type T and every order.
#define STARWAVE_EMULATION_COMPARISONS(T)                                                                             \
  template void expect_emulation_matches_cpu<T, 2>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, LaunchShape);                                  \
  template void expect_emulation_matches_cpu<T, 4>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, LaunchShape);                                  \
  template void expect_emulation_matches_cpu<T, 6>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, LaunchShape);                                  \
  template void expect_emulation_matches_cpu<T, 8>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, LaunchShape);                                  \
  template void expect_adjoint_emulation_matches_cpu<T, 2>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, LaunchShape, int, int, ImageSums);     \
  template void expect_adjoint_emulation_matches_cpu<T, 4>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, LaunchShape, int, int, ImageSums);     \
  template void expect_adjoint_emulation_matches_cpu<T, 6>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, LaunchShape, int, int, ImageSums);     \
  template void expect_adjoint_emulation_matches_cpu<T, 8>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, LaunchShape, int, int, ImageSums);
