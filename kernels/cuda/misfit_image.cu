// kernels/cuda/misfit_image.cu — CUDA kernels of the misfit, image and reduce tasks: the
// per-element math and the misfit's order of summation of kernels/misfit_image.hpp.
#include <cuda_runtime.h>

#include "kernels/cuda/misfit_image.hpp"
#include "kernels/misfit_image.hpp"
#include "kernels/misfit_trace.hpp"

namespace starwave::cuda {
namespace {

using imaging::kMisfitBlocks;
using imaging::kMisfitThreads;
constexpr int kThreads = 256;

/// The halving tree over a block's shared values (imaging::halving_sum, in parallel).
template <int Count>
__device__ double block_halving_sum(double* v) {
  for (int h = Count / 2; h > 0; h /= 2) {
    if (int(threadIdx.x) < h) v[threadIdx.x] += v[threadIdx.x + h];
    __syncthreads();
  }
  return v[0];
}

/// Block b, thread t: lane b·kMisfitThreads + t; the block's sum to block_sums[b].
template <typename T>
__global__ void misfit_lanes_kernel(const T* syn, const float* obs, T* res, long n, imaging::Mode mode,
                                    imaging::TraceWeights w, double* block_sums) {
  __shared__ double lanes[kMisfitThreads];
  lanes[threadIdx.x] =
      imaging::misfit_lane(syn, obs, res, n, mode, long(blockIdx.x) * kMisfitThreads + long(threadIdx.x), w);
  __syncthreads();
  const double sum = block_halving_sum<kMisfitThreads>(lanes);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;
}

__global__ void misfit_blocks_kernel(const double* block_sums, double* misfit) {
  __shared__ double v[kMisfitBlocks];
  v[threadIdx.x] = block_sums[threadIdx.x];
  __syncthreads();
  const double sum = block_halving_sum<kMisfitBlocks>(v);
  if (threadIdx.x == 0) *misfit = 0.5 * sum;
}

template <typename T>
__global__ void trace_sums_kernel(const T* syn, const float* obs, double* scratch, imaging::TraceScratch at,
                                  imaging::TraceWeights w) {
  const long r = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < at.nrec) imaging::trace_sums(syn, obs, w, r, scratch + at.sums(r));
}

__global__ void shot_totals_kernel(double* scratch, imaging::TraceScratch at, imaging::TraceWeights w) {
  imaging::shot_totals(scratch, at, w);
}

template <typename T>
__global__ void trace_normalized_kernel(const T* syn, const float* obs, T* res, double* scratch,
                                        imaging::TraceScratch at, imaging::Misfit f, imaging::TraceWeights w) {
  const long r = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < at.nrec) scratch[at.value(r)] = imaging::trace_normalized(syn, obs, res, scratch, at, f, w, r);
}

__global__ void twiddles_kernel(double* scratch, imaging::TraceScratch at) {
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < at.fft / 2) imaging::unit_root(k, at.fft, scratch[at.twiddles() + 2 * k], scratch[at.twiddles() + 2 * k + 1]);
}

/// Traces first … first + kEnvelopeTraces − 1, each in its workspace slot r mod kEnvelopeTraces.
template <typename T>
__global__ void trace_envelope_kernel(const T* syn, const float* obs, T* res, double* scratch, imaging::TraceScratch at,
                                      imaging::TraceWeights w, long first) {
  const long r = first + long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < at.nrec && r < first + imaging::kEnvelopeTraces)
    scratch[at.value(r)] = imaging::trace_envelope(syn, obs, res, scratch + at.twiddles(),
                                                   scratch + at.work(r % imaging::kEnvelopeTraces), at, w, r);
}

__global__ void sum_trace_values_kernel(const double* scratch, imaging::TraceScratch at, double* misfit) {
  *misfit = imaging::sum_trace_values(scratch, at);
}

template <typename T>
__global__ void contribution_kernel(const T* corr, const T* illum, const T* v, T* out, long n, imaging::Mode mode,
                                    int sums) {
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) imaging::contribution_point(corr, illum, v, out, n, mode, k, sums);
}

template <typename T>
__global__ void accumulate_kernel(T* a, const T* b, long n) {
  const long k = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) a[k] += b[k];
}

/// Blocks for n threads, or 0 when a launch cannot cover them.
long blocks(long n) {
  const long b = (n + kThreads - 1) / kThreads;
  return b <= 0x7fffffffL ? b : 0;
}

Status launched(const char* name) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? Status{} : Status{int(e), name};
}

}  // namespace

template <typename T>
Status misfit(const T* synthetic, const float* observed, T* residual, double* block_sums, double* misfit, long n,
              imaging::Mode mode, imaging::TraceWeights w, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  misfit_lanes_kernel<<<kMisfitBlocks, kMisfitThreads, 0, s>>>(synthetic, observed, residual, n, mode, w, block_sums);
  if (Status st = launched("misfit lanes"); !st) return st;
  misfit_blocks_kernel<<<1, kMisfitBlocks, 0, s>>>(block_sums, misfit);
  return launched("misfit blocks");
}

template <typename T>
Status trace_misfit(const T* synthetic, const float* observed, T* residual, double* scratch, double* misfit, long nrec,
                    imaging::Misfit f, imaging::TraceWeights w, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const imaging::TraceScratch at = imaging::trace_scratch(f, nrec, w.nt);
  constexpr int kTraceThreads = 64;  // a trace a thread, each a long loop: small blocks
  const unsigned trace_blocks = unsigned((nrec + kTraceThreads - 1) / kTraceThreads);
  if (nrec <= 0) return {};
  if (f == imaging::Misfit::kEnvelope) {
    twiddles_kernel<<<unsigned(blocks(at.fft / 2)), kThreads, 0, s>>>(scratch, at);
    if (Status st = launched("misfit twiddles"); !st) return st;
    for (long first = 0; first < nrec; first += imaging::kEnvelopeTraces) {
      trace_envelope_kernel<<<unsigned(imaging::kEnvelopeTraces / kTraceThreads), kTraceThreads, 0, s>>>(
          synthetic, observed, residual, scratch, at, w, first);
      if (Status st = launched("misfit envelopes"); !st) return st;
    }
  } else {
    trace_sums_kernel<<<trace_blocks, kTraceThreads, 0, s>>>(synthetic, observed, scratch, at, w);
    if (Status st = launched("misfit trace sums"); !st) return st;
    shot_totals_kernel<<<1, 1, 0, s>>>(scratch, at, w);
    if (Status st = launched("misfit shot totals"); !st) return st;
    trace_normalized_kernel<<<trace_blocks, kTraceThreads, 0, s>>>(synthetic, observed, residual, scratch, at, f, w);
    if (Status st = launched("misfit traces"); !st) return st;
  }
  sum_trace_values_kernel<<<1, 1, 0, s>>>(scratch, at, misfit);
  return launched("misfit sum");
}

template <typename T>
Status contribution(const T* correlation, const T* illumination, const T* velocity, T* out, long n, imaging::Mode mode,
                    int sums, void* stream) {
  if (n <= 0) return {};
  const long b = blocks(n);
  if (b == 0) return Status{int(cudaErrorInvalidConfiguration), "image contribution"};
  contribution_kernel<<<unsigned(b), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(correlation, illumination,
                                                                                       velocity, out, n, mode, sums);
  return launched("image contribution");
}

template <typename T>
Status accumulate(T* a, const T* b, long n, void* stream) {
  if (n <= 0) return {};
  const long nb = blocks(n);
  if (nb == 0) return Status{int(cudaErrorInvalidConfiguration), "reduce"};
  accumulate_kernel<<<unsigned(nb), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b, n);
  return launched("reduce");
}

#define STARWAVE_INSTANTIATE(T)                                                                                       \
  template Status misfit<T>(const T*, const float*, T*, double*, double*, long, imaging::Mode, imaging::TraceWeights, \
                            void*);                                                                                   \
  template Status trace_misfit<T>(const T*, const float*, T*, double*, double*, long, imaging::Misfit,                \
                                  imaging::TraceWeights, void*);                                                      \
  template Status contribution<T>(const T*, const T*, const T*, T*, long, imaging::Mode, int, void*);                 \
  template Status accumulate<T>(T*, const T*, long, void*);
STARWAVE_INSTANTIATE(float)
STARWAVE_INSTANTIATE(double)
#undef STARWAVE_INSTANTIATE

}  // namespace starwave::cuda
