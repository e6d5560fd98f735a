// kernels/cuda/misfit_image.hpp — CUDA launchers of the misfit, image and reduce tasks
// (kernels/misfit_image.hpp), on the caller's stream, never synchronising. Declared in every
// build; defined where CUDA is compiled in.
#pragma once

#include "kernels/cuda/propagate.hpp"
#include "kernels/misfit_image.hpp"
#include "kernels/misfit_trace.hpp"

namespace starwave::cuda {

/// residual[i] = w · adjoint_source(synthetic[i], observed[i]) for i < n (w the weight of
/// trace i / w.nt, its window's taper squared with one: imaging::weighted_residual), and
/// *misfit = ½ Σ w · adjoint_source²
/// summed in imaging's fixed order over the whole device (kMisfitBlocks blocks;
/// `block_sums`: kMisfitBlocks doubles of device scratch) — the CPU's bits.
template <typename T>
Status misfit(const T* synthetic, const float* observed, T* residual, double* block_sums, double* misfit, long n,
              imaging::Mode mode, imaging::TraceWeights w, void* stream);

/// The trace misfit f (not kL2) of one shot, nrec × w.nt samples: residual = its adjoint source,
/// *misfit = Φ_s, in imaging::misfit_traces' order (a trace a thread; the sums over traces by
/// one thread) — the CPU's bits. `scratch`: imaging::misfit_scratch_size doubles.
template <typename T>
Status trace_misfit(const T* synthetic, const float* observed, T* residual, double* scratch, double* misfit, long nrec,
                    imaging::Misfit f, imaging::TraceWeights w, void* stream);

/// out = [contribution (n) | illumination (sums × n)] (kernels/misfit_image.hpp).
template <typename T>
Status contribution(const T* correlation, const T* illumination, const T* velocity, T* out, long n, imaging::Mode mode,
                    int sums, void* stream);

/// a[i] += b[i], i < n.
template <typename T>
Status accumulate(T* a, const T* b, long n, void* stream);

}  // namespace starwave::cuda
