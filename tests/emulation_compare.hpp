// tests/emulation_compare.hpp — the two comparisons of test_cuda_emulation: a shot's forward,
// and its adjoint, through the CPU kernel and through the emulated CUDA launches, expected
// to give the same bits. Defined in emulation_compare_impl.hpp and instantiated for float and
// for double in two files of their own, which compile side by side (under the sanitizers
// one file holding every instantiation was the build's longest by minutes).
#pragma once

#include <string>

#include "kernels/shot.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"

namespace starwave::test {

/// How the emulated launches split the work (the bits do not depend on it):
/// ShotProblem::column_planes and ShotProblem::march_planes.
struct LaunchShape {
  int column_planes = 0, march_planes = 0;
  LaunchShape(int column = 0, int march = 0) : column_planes(column), march_planes(march) {}  // NOLINT: from an int
  template <typename T>
  void set(ShotProblem<T>& p) const {
    p.column_planes = column_planes;
    p.march_planes = march_planes;
  }
};

/// Runs shot 0 with the CPU kernel and with the emulated CUDA launches: the same bits.
template <typename T, int Order>
void expect_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o,
                                  const std::string& context, LaunchShape shape = {});

/// The adjoint of shot 0 (residual = its traces) through cpu::adjoint and through the
/// emulated CUDA launches, each after its own forward with a `storage` store: the same
/// bits in the correlation, the illumination, the store, the final state and (with
/// `checkpoint_every`, ShotProblem::checkpoint_every) the checkpoints; `compression`:
/// ShotProblem::compression.
template <typename T, int Order>
void expect_adjoint_emulation_matches_cpu(const Model& m, const Survey& s, const NumericalOptions& o, int storage,
                                          const std::string& context, LaunchShape shape = {}, int checkpoint_every = 0,
                                          int compression = 0, ImageSums sums = {});

}  // namespace starwave::test
