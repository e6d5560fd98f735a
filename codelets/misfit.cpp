// codelets/misfit.cpp — StarPU glue of the misfit task.
#include "codelets/misfit.hpp"

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cuda/misfit_image.hpp"
#include "kernels/misfit_image.hpp"
#include "kernels/misfit_trace.hpp"

namespace starwave {
namespace {

using codelets::vector_ptr;

struct MisfitArgs {
  imaging::Mode mode;
  imaging::Misfit misfit;  // not kL2: mode is kGradient (the trace misfits compare synthetic and observed)
  bool windowed;           // buffer 5 holds the traces' time windows after their weights
};

/// The trace weights of buffer 5 (nrec floats, then nrec × 3 window floats when windowed) over
/// buffer 0's nrec × nt samples; the observed samples' remainders where buffer 1 holds twice
/// buffer 0's samples (graph::ShotReads::split_observed).
imaging::TraceWeights weights(void* buffers[], const MisfitArgs& a) {
  const long nrec = long(STARPU_VECTOR_GET_NX(buffers[5])) / (a.windowed ? 4 : 1);
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  const float* w = vector_ptr<const float>(buffers[5]);
  const float* observed = vector_ptr<const float>(buffers[1]);
  const bool split = long(STARPU_VECTOR_GET_NX(buffers[1])) == 2 * n;
  return {w, n / (nrec > 0 ? nrec : 1), a.windowed ? w + nrec : nullptr, split ? observed + n : nullptr};
}

template <typename T>
void misfit_cpu_typed(void* buffers[], const MisfitArgs& a) {
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  const T* syn = vector_ptr<const T>(buffers[0]);
  const float* obs = vector_ptr<const float>(buffers[1]);
  T* res = vector_ptr<T>(buffers[2]);
  const imaging::TraceWeights w = weights(buffers, a);
  *vector_ptr<double>(buffers[3]) =
      a.misfit == imaging::Misfit::kL2
          ? imaging::misfit_fixed_order(syn, obs, res, n, a.mode, w)
          : imaging::misfit_traces(syn, obs, res, vector_ptr<double>(buffers[4]), n / w.nt, w.nt, a.misfit, w);
}

void misfit_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("misfit")) return;
  MisfitArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  if (STARPU_VECTOR_GET_ELEMSIZE(buffers[0]) == sizeof(double))
    misfit_cpu_typed<double>(buffers, a);
  else
    misfit_cpu_typed<float>(buffers, a);
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void misfit_cuda_typed(void* buffers[], const MisfitArgs& a) {
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  const imaging::TraceWeights w = weights(buffers, a);
  const T* syn = vector_ptr<const T>(buffers[0]);
  const float* obs = vector_ptr<const float>(buffers[1]);
  T* res = vector_ptr<T>(buffers[2]);
  double* scratch = vector_ptr<double>(buffers[4]);
  double* misfit = vector_ptr<double>(buffers[3]);
  void* stream = starpu_cuda_get_local_stream();
  codelets::check_cuda(a.misfit == imaging::Misfit::kL2
                           ? cuda::misfit(syn, obs, res, scratch, misfit, n, a.mode, w, stream)
                           : cuda::trace_misfit(syn, obs, res, scratch, misfit, n / w.nt, a.misfit, w, stream),
                       "misfit task");
}

void misfit_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("misfit")) return;
  MisfitArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  if (STARPU_VECTOR_GET_ELEMSIZE(buffers[0]) == sizeof(double))
    misfit_cuda_typed<double>(buffers, a);
  else
    misfit_cuda_typed<float>(buffers, a);
}
#endif

struct starpu_codelet* misfit_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_misfit");
  static struct starpu_codelet cl =
      codelets::task_codelet(misfit_cpu, "misfit_cpu", STARWAVE_CUDA_FUNCTION(misfit_cuda), &model, "misfit",
                             {STARPU_R, STARPU_R, STARPU_W, STARPU_W, STARPU_SCRATCH, STARPU_R});
  return &cl;
}

}  // namespace

void insert_misfit(const MisfitHandles& h, imaging::Mode mode, imaging::Misfit misfit, bool windowed) {
  const MisfitArgs a{mode, misfit, windowed};
  submit_on(misfit_codelet(), "misfit", {h.synthetic, h.observed, h.residual, h.misfit, h.scratch, h.weights},
            STARPU_VALUE, &a, sizeof a);
}

}  // namespace starwave
