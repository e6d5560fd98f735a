// kernels/cuda/propagate.hpp — CUDA propagator entry points, callable from host C++ that
// does not include CUDA headers. Declared in every build; defined in propagate.cu where
// CUDA is compiled in (STARWAVE_USE_CUDA).
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cuda {

/// Runs one shot on the GPU (with p.store / p.final_state set, also keeps the wavefield
/// for the adjoint): every pointer of `p` is device memory; all launches go on
/// `stream` (a cudaStream_t) and nothing synchronises. Returns a cudaError_t (0 = success).
template <int Order, typename T>
int forward(const ShotProblem<T>& p, void* stream);

/// Runs one shot's adjoint on the GPU (cpu::adjoint's contract, device pointers, no source
/// adjoint): back-propagates `residual` and adds to `correlation` and `illumination`.
template <int Order, typename T>
int adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, void* stream);

/// Human-readable text of an error code returned above.
const char* error_string(int code);

}  // namespace starwave::cuda
