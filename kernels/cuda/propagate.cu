// kernels/cuda/propagate.cu — CUDA kernels for the leapfrog/CPML scheme of
// kernels/stencil.hpp: the bodies as 1-D launches on the caller's stream (StarPU's
// worker stream), never synchronising. The launch sequence and the thread bodies live in
// kernels/cuda/bodies.hpp so the tests can run them on the host. Compiled with
// -fmad=false -ftz=true (CMakeLists.txt): the CPU kernel's operations, rounded the same.
#include <cuda_runtime.h>

#include "kernels/cuda/bodies.hpp"
#include "kernels/cuda/born.hpp"
#include "kernels/cuda/propagate.hpp"
#include "kernels/orders.hpp"

namespace starwave::cuda {
namespace {

using namespace starwave::cuda_bodies;

// At most 32 registers a thread, so 8 blocks fill an SM: the stencil hides its load latency
// with more warps in flight.
template <typename F>
__global__ void __launch_bounds__(kBlock1D, 8) sweep1d_kernel(F f, long n) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) f(t);
}

// The interior runs keep a column's planes in registers: up to 64 a thread.
template <typename F>
__global__ void __launch_bounds__(kBlock1D, 4) sweep_wide_kernel(F f, long n) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) f(t);
}

// A launch over several shots of a batch: shot blockIdx.y (kernels/cuda/forward.hpp, run_batch).
template <typename F>
__global__ void __launch_bounds__(kBlock1D, 8) shots_kernel(F f, long n) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) f(int(blockIdx.y), t);
}
template <typename F>
__global__ void __launch_bounds__(kBlock1D, 4) shots_wide_kernel(F f, long n) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) f(int(blockIdx.y), t);
}

// A March (kernels/cuda/march.hpp): its phases between the block's barriers, the plane's
// tile in shared memory.
template <typename B>
__global__ void __launch_bounds__(B::kThreads, B::kMinBlocks) march_kernel(B b) {
  __shared__ typename B::Value tile[B::kTile];
  typename B::Thread s;
  const int t = int(threadIdx.x);
  b.begin(long(blockIdx.x), t, s);
  const int planes = b.planes(s);
  for (int k = 0; k < planes; ++k) {
    b.load(s, t, tile, k);
    __syncthreads();
    b.compute(s, t, tile, k);
    __syncthreads();
  }
}

/// Executor of run_shot()/run_adjoint() on a real GPU stream. The first failure (a launch
/// refused, a memory operation failed) is kept with the launch's name; nothing is launched
/// after it.
struct DeviceExec {
  cudaStream_t stream;
  Status status{};

  void check(const char* name, cudaError_t e) {
    if (e != cudaSuccess && status.code == 0) status = Status{int(e), name};
  }
  template <typename T>
  bool zero(T* p, std::size_t n) {
    if (status.code == 0) check("memset of the work arrays", cudaMemsetAsync(p, 0, n * sizeof(T), stream));
    return status.code == 0;
  }
  /// The blocks of a launch of n threads (a shot), or 0 when there is nothing to launch or it
  /// cannot be launched (recorded).
  unsigned blocks_for(const char* name, long n, int shots = 1) {
    if (status.code != 0 || n <= 0 || shots <= 0) return 0;
    const long blocks = (n + kBlock1D - 1) / kBlock1D;
    if (blocks > 0x7fffffffL || shots > 65535) {
      check(name, cudaErrorInvalidConfiguration);
      return 0;
    }
    return unsigned(blocks);
  }
  template <typename F>
  void sweep1d(const char* name, F f, long n) {
    if (const unsigned g = blocks_for(name, n)) {
      sweep1d_kernel<<<g, kBlock1D, 0, stream>>>(f, n);
      check(name, cudaGetLastError());
    }
  }
  template <typename F>
  void sweep_wide(const char* name, F f, long n) {
    if (const unsigned g = blocks_for(name, n)) {
      sweep_wide_kernel<<<g, kBlock1D, 0, stream>>>(f, n);
      check(name, cudaGetLastError());
    }
  }
  template <typename F>
  void sweep_shots(const char* name, F f, long n, int shots) {
    if (const unsigned g = blocks_for(name, n, shots)) {
      shots_kernel<<<dim3(g, unsigned(shots)), kBlock1D, 0, stream>>>(f, n);
      check(name, cudaGetLastError());
    }
  }
  template <typename F>
  void sweep_wide_shots(const char* name, F f, long n, int shots) {
    if (const unsigned g = blocks_for(name, n, shots)) {
      shots_wide_kernel<<<dim3(g, unsigned(shots)), kBlock1D, 0, stream>>>(f, n);
      check(name, cudaGetLastError());
    }
  }
  template <typename B>
  void march(const char* name, const B& b) {
    if (status.code != 0 || b.g.blocks <= 0) return;
    if (b.g.blocks > 0x7fffffffL) return check(name, cudaErrorInvalidConfiguration);
    march_kernel<<<unsigned(b.g.blocks), B::kThreads, 0, stream>>>(b);
    check(name, cudaGetLastError());
  }
  /// Captures the launches of `issue` as a CUDA graph and launches it `times` times: one
  /// host call for 2 × kChunkSteps steps (Step reads their numbers on the device).
  template <typename F>
  void replay(const char* name, long times, F&& issue) {
    if (status.code != 0 || times <= 0) return;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    check(name, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    if (status.code != 0) return;
    issue(*this);
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);  // ends the capture even after a failure
    check(name, ended);
    if (status.code == 0) check(name, cudaGraphInstantiate(&exec, graph, 0));
    for (long i = 0; i < times && status.code == 0; ++i) check(name, cudaGraphLaunch(exec, stream));
    if (exec) cudaGraphExecDestroy(exec);  // released once its launches have run
    if (graph) cudaGraphDestroy(graph);
  }
  bool ok() const { return status.code == 0; }
};

}  // namespace

template <int Order, typename T>
Status forward(const ShotProblem<T>& p, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_shot<Order>(p, ex);
  return ex.status;
}

template <int Order, typename T>
Status forward_batch(const ShotProblem<T>* shots, int n, ShotProblem<T>* table, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  if (n > 1)
    ex.check("copy of the batch's shots",
             cudaMemcpyAsync(table, shots, std::size_t(n) * sizeof(ShotProblem<T>), cudaMemcpyHostToDevice, ex.stream));
  if (ex.ok()) run_batch<Order>(ShotBatch<T>{shots, table, n}, ex);
  return ex.status;
}

template <int Order, typename T>
Status adjoint_batch(const AdjointShot<T>* shots, int n, AdjointShot<T>* table, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  if (n > 1)
    ex.check("copy of the batch's shots",
             cudaMemcpyAsync(table, shots, std::size_t(n) * sizeof(AdjointShot<T>), cudaMemcpyHostToDevice, ex.stream));
  if (ex.ok()) run_adjoint_batch<Order>(AdjointBatch<T>{shots, table, n}, ex);
  return ex.status;
}

template <int Order, typename T>
Status adjoint(const ShotProblem<T>& p, const T* residual, T* correlation, T* illumination, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_adjoint<Order>(p, residual, correlation, illumination, ex);
  return ex.status;
}

template <int Order, typename T>
Status forward_steps(const ShotProblem<T>& p, int lo, int hi, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_shot_steps<Order>(p, lo, hi, ex);
  return ex.status;
}

template <int Order, typename T>
Status adjoint_steps(const ShotProblem<T>& p, const T* residual, int hi, int lo, T* correlation, T* illumination,
                     void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_adjoint_steps<Order>(p, residual, hi, lo, correlation, illumination, ex);
  return ex.status;
}

template <int Order, typename T>
Status born_steps(const ShotProblem<T>& p, const ShotProblem<T>& d, const T* scatter, int lo, int hi, void* stream) {
  DeviceExec ex{static_cast<cudaStream_t>(stream)};
  run_born_steps<Order>(p, d, scatter, lo, hi, ex);
  return ex.status;
}

__global__ void device_fault_kernel(float* p) { p[threadIdx.x] = 1.0f; }

void provoke_device_fault(void* stream) {
  device_fault_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(nullptr);
}

const char* error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

#define STARWAVE_INSTANTIATE(O, T)                                                               \
  template Status forward<O, T>(const ShotProblem<T>&, void*);                                   \
  template Status forward_batch<O, T>(const ShotProblem<T>*, int, ShotProblem<T>*, void*);       \
  template Status adjoint_batch<O, T>(const AdjointShot<T>*, int, AdjointShot<T>*, void*);       \
  template Status adjoint<O, T>(const ShotProblem<T>&, const T*, T*, T*, void*);                 \
  template Status forward_steps<O, T>(const ShotProblem<T>&, int, int, void*);                   \
  template Status adjoint_steps<O, T>(const ShotProblem<T>&, const T*, int, int, T*, T*, void*); \
  template Status born_steps<O, T>(const ShotProblem<T>&, const ShotProblem<T>&, const T*, int, int, void*);
STARWAVE_FOR_EACH_KERNEL(STARWAVE_INSTANTIATE)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cuda
