// kernels/cuda/propagate.hpp — CUDA propagator entry points, callable from host C++ that
// does not include CUDA headers. Declared in every build; defined in propagate.cu where
// CUDA is compiled in (STARWAVE_USE_CUDA).
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cuda {

/// What a launcher returns: a cudaError_t (0 = success) and, on failure, the launch (or
/// memory operation) that failed, named as in kernels/cuda/bodies.hpp.
struct Status {
  int code = 0;
  const char* launch = nullptr;
  explicit operator bool() const { return code == 0; }
};

/// Runs one shot on the GPU (with p.store / p.final_state set, also keeps the wavefield
/// for the adjoint): every pointer of `p` is device memory; all launches go on
/// `stream` (a cudaStream_t) and nothing synchronises.
template <int Order, typename T>
Status forward(const ShotProblem<T>& p, void* stream);

/// Runs the forwards of `n` shots of one geometry (a batch, kernels/cuda/forward.hpp
/// ShotBatch: shot b's work arrays at shots[0].work + b × ShotBatch<T>::stride_of(shots[0]))
/// on the GPU, each pass one launch for every shot; `shots` on the host, `table` device
/// memory for n problems (copied there first). Each shot's traces are its forward()'s.
template <int Order, typename T>
Status forward_batch(const ShotProblem<T>* shots, int n, ShotProblem<T>* table, void* stream);

/// Runs the adjoints of `n` shots of one geometry (kernels/cuda/bodies.hpp AdjointBatch: shot
/// b's work arrays at shots[0].p.work + b × ShotProblem::adjoint_batch_stride()) on the GPU,
/// each pass of a backward step one launch for every shot; `shots` on the host, `table`
/// device memory for n entries (copied there first). Each shot's images are its adjoint()'s.
template <int Order, typename T>
Status adjoint_batch(const AdjointShot<T>* shots, int n, AdjointShot<T>* table, void* stream);

/// Runs one shot's adjoint on the GPU (cpu::adjoint's contract, device pointers, no source
/// adjoint): back-propagates `residual` and adds to `correlation` and `illumination`.
template <int Order, typename T>
Status adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, void* stream);

/// Steps [lo, hi) of a shot's forward, and steps hi − 1 … lo of its adjoint, the state kept in
/// p.work between calls (cpu::forward_steps, cpu::adjoint_steps; the adjoint adds to
/// `correlation` and `illumination` as it goes): the interval of a split store.
template <int Order, typename T>
Status forward_steps(const ShotProblem<T>& p, int lo, int hi, void* stream);
template <int Order, typename T>
Status adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination,
                     void* stream);

/// Steps [lo, hi) of a shot's Born modelling on the GPU (cpu::born_steps' contract: u in `p`,
/// which keeps its traces, store, checkpoints and final state as a forward's when set, δu in
/// `d`, whose traces are the Born data; `scatter` on the padded grid; device pointers).
template <int Order, typename T>
Status born_steps(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, int lo, int hi, void* stream);

/// Launches a kernel that writes through a null pointer: a fault that leaves the device
/// unusable, for the tests of that path (codelets/failure.hpp). Never called otherwise.
void provoke_device_fault(void* stream);

/// Human-readable text of a cudaError_t.
const char* error_string(int code);

}  // namespace starwave::cuda
