// tests/emulation_compare_impl.hpp — the definitions of tests/emulation_compare.hpp, included
// by the files that instantiate them (emulation_compare_float.cpp, emulation_compare_double.cpp).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/cpu/subnormals.hpp"  // the device flushes float subnormals (nvcc -ftz=true)
#include "tests/cuda_emulation.hpp"
#include "tests/emulation_compare.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {

/// Runs shot 0 with the CPU kernel and with the emulated CUDA launches: the same bits.
template <typename T, int Order>
void expect_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o,
                                  const std::string& context, int column_planes) {
  auto cpu = prepare_shot<T>(m, s, o);
  cpu::forward<Order, T>(cpu->p);
  auto emu = prepare_shot<T>(m, s, o);
  emu->p.column_planes = column_planes;
  EmulatedExec ex;
  const cpu::detail::FlushSubnormals<T> as_on_the_device;
  ASSERT_TRUE((cuda_bodies::run_shot<Order>(emu->p, ex)));
  const std::size_t n = cpu->traces.size();
  ASSERT_GT(norm(std::vector<double>(cpu->traces.begin(), cpu->traces.end())), 0) << context;
  EXPECT_TRUE(same_bits(cpu->traces.data(), emu->traces.data(), n))
      << "traces, order " << Order << ", " << context << ", first difference at "
      << first_difference(cpu->traces.data(), emu->traces.data(), n);
}

/// The adjoint of shot 0 (residual = its traces) through cpu::adjoint and through the
/// emulated CUDA launches, each after its own forward with a `storage` store: the same
/// bits in the correlation, the illumination, the store and the final state.
template <typename T, int Order>
void expect_adjoint_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o, int storage,
                                          const std::string& context, int column_planes, int checkpoint_every,
                                          int compression) {
  std::vector<T> corr[2], illum[2];
  aligned_vector<T> store[2], final_state[2], checkpoints[2];
  for (int emulated : {0, 1}) {
    auto ps = prepare_shot<T>(m, s, o);
    ShotProblem<T>& p = ps->p;
    p.storage = storage;
    p.column_planes = column_planes;
    p.checkpoint_every = checkpoint_every;
    p.compression = compression;
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
    illum[emulated].assign(region, T(0));
    EmulatedExec ex;
    const cpu::detail::FlushSubnormals<T> as_on_the_device;
    if (emulated) {
      ASSERT_TRUE((cuda_bodies::run_shot<Order>(p, ex)));
      ASSERT_TRUE((cuda_bodies::run_adjoint<Order>(p, ps->traces.data(), corr[1].data(), illum[1].data(), ex)));
    } else {
      cpu::forward<Order, T>(p);
      cpu::adjoint<Order, T>(p, ps->traces.data(), corr[0].data(), illum[0].data(), nullptr);
    }
  }
  const std::string what = "order " + std::to_string(Order) + ", storage " + std::to_string(storage) +
                           (checkpoint_every > 0 ? ", checkpoints every " + std::to_string(checkpoint_every) : "") +
                           (compression ? std::string(", store ") + compression_name(compression) : "") + ", " +
                           context;
  if (!checkpoints[0].empty()) {
    EXPECT_TRUE(same_bits(checkpoints[0].data(), checkpoints[1].data(), checkpoints[0].size()))
        << "checkpoints, " << what << ", first difference at "
        << first_difference(checkpoints[0].data(), checkpoints[1].data(), checkpoints[0].size());
  }
  EXPECT_TRUE(same_bits(store[0].data(), store[1].data(), store[0].size()))
      << "store, " << what << ", first difference at "
      << first_difference(store[0].data(), store[1].data(), store[0].size());
  for (auto* field : {corr, illum}) {
    ASSERT_GT(norm(std::vector<double>(field[0].begin(), field[0].end())), 0) << what;
    EXPECT_TRUE(same_bits(field[0].data(), field[1].data(), field[0].size()))
        << (field == corr ? "correlation, " : "illumination, ") << what << ", first difference at "
        << first_difference(field[0].data(), field[1].data(), field[0].size());
  }
}

}  // namespace starwave::test

/// Instantiates both comparisons for type T and every order.
#define STARWAVE_EMULATION_COMPARISONS(T)                                                                             \
  template void expect_emulation_matches_cpu<T, 2>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, int);                                          \
  template void expect_emulation_matches_cpu<T, 4>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, int);                                          \
  template void expect_emulation_matches_cpu<T, 6>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, int);                                          \
  template void expect_emulation_matches_cpu<T, 8>(const Model&, const Survey&, const NumericalOptions&,              \
                                                   const std::string&, int);                                          \
  template void expect_adjoint_emulation_matches_cpu<T, 2>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, int, int, int);                        \
  template void expect_adjoint_emulation_matches_cpu<T, 4>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, int, int, int);                        \
  template void expect_adjoint_emulation_matches_cpu<T, 6>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, int, int, int);                        \
  template void expect_adjoint_emulation_matches_cpu<T, 8>(const Model&, const Survey&, const NumericalOptions&, int, \
                                                           const std::string&, int, int, int);
