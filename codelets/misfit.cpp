// codelets/misfit.cpp — StarPU glue of the misfit task.
#include "codelets/misfit.hpp"

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cuda/misfit_image.hpp"
#include "kernels/misfit_image.hpp"

namespace starwave {
namespace {

using codelets::vector_ptr;

/// The trace weights of buffer 5 (nrec floats) over buffer 0's nrec × nt samples.
imaging::TraceWeights weights(void* buffers[]) {
  const long nrec = long(STARPU_VECTOR_GET_NX(buffers[5]));
  return {vector_ptr<const float>(buffers[5]), long(STARPU_VECTOR_GET_NX(buffers[0])) / (nrec > 0 ? nrec : 1)};
}

template <typename T>
void misfit_cpu_typed(void* buffers[], imaging::Mode mode) {
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  const T* syn = vector_ptr<const T>(buffers[0]);
  const float* obs = vector_ptr<const float>(buffers[1]);
  T* res = vector_ptr<T>(buffers[2]);
  *vector_ptr<double>(buffers[3]) = imaging::misfit_fixed_order(syn, obs, res, n, mode, weights(buffers));
}

void misfit_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("misfit")) return;
  imaging::Mode mode;
  starpu_codelet_unpack_args(cl_arg, &mode);
  if (STARPU_VECTOR_GET_ELEMSIZE(buffers[0]) == sizeof(double))
    misfit_cpu_typed<double>(buffers, mode);
  else
    misfit_cpu_typed<float>(buffers, mode);
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void misfit_cuda_typed(void* buffers[], imaging::Mode mode) {
  codelets::check_cuda(cuda::misfit(vector_ptr<const T>(buffers[0]), vector_ptr<const float>(buffers[1]),
                                    vector_ptr<T>(buffers[2]), vector_ptr<double>(buffers[4]),
                                    vector_ptr<double>(buffers[3]), long(STARPU_VECTOR_GET_NX(buffers[0])), mode,
                                    weights(buffers).weight, weights(buffers).nt, starpu_cuda_get_local_stream()),
                       "misfit task");
}

void misfit_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("misfit")) return;
  imaging::Mode mode;
  starpu_codelet_unpack_args(cl_arg, &mode);
  if (STARPU_VECTOR_GET_ELEMSIZE(buffers[0]) == sizeof(double))
    misfit_cuda_typed<double>(buffers, mode);
  else
    misfit_cuda_typed<float>(buffers, mode);
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

void insert_misfit(const MisfitHandles& h, imaging::Mode mode) {
  submit_on(misfit_codelet(), "misfit", {h.synthetic, h.observed, h.residual, h.misfit, h.scratch, h.weights},
            STARPU_VALUE, &mode, sizeof mode);
}

}  // namespace starwave
