// kernels/cuda/imaging.hpp — CUDA launchers of the misfit, image and reduce tasks
// (kernels/imaging.hpp), on the caller's stream, never synchronising. Declared in every
// build; defined where CUDA is compiled in. Return a cudaError_t (0 = success).
#pragma once

namespace starwave::cuda {

/// residual[i] = adjoint_source(synthetic[i], observed[i]) for i < n, and *misfit = ½ Σ
/// residual² summed in a fixed order (one block, fixed strides: the same bits every run).
template <typename T>
int misfit(const T* synthetic, const float* observed, T* residual, double* misfit, long n, int mode, void* stream);

/// out = [contribution (n) | illumination (n)] (kernels/imaging.hpp).
template <typename T>
int contribution(const T* correlation, const T* illumination, const T* velocity, T* out, long n, int mode,
                 void* stream);

/// a[i] += b[i], i < n.
template <typename T>
int accumulate(T* a, const T* b, long n, void* stream);

}  // namespace starwave::cuda
