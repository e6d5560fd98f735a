// codelets/image.cpp — StarPU glue of the image and reduce tasks.
#include "codelets/image.hpp"

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cuda/misfit_image.hpp"
#include "kernels/misfit_image.hpp"

namespace starwave {
namespace {

using codelets::vector_ptr;

bool is_double(void* buffer) { return STARPU_VECTOR_GET_ELEMSIZE(buffer) == sizeof(double); }

/// The illumination arrays an image task's shot summed (ShotProblem::illumination_sums()).
int illumination_sums(void* buffers[]) {
  return int(STARPU_VECTOR_GET_NX(buffers[1]) / STARPU_VECTOR_GET_NX(buffers[0]));
}

template <typename T>
void image_cpu_typed(void* buffers[], imaging::Mode mode) {
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  const T* corr = vector_ptr<const T>(buffers[0]);
  const T* illum = vector_ptr<const T>(buffers[1]);
  const T* v = vector_ptr<const T>(buffers[2]);
  T* out = vector_ptr<T>(buffers[3]);
  const int sums = illumination_sums(buffers);
  for (long k = 0; k < n; ++k) imaging::contribution_point(corr, illum, v, out, n, mode, k, sums);
}

void image_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("image")) return;
  imaging::Mode mode;
  starpu_codelet_unpack_args(cl_arg, &mode);
  if (is_double(buffers[0]))
    image_cpu_typed<double>(buffers, mode);
  else
    image_cpu_typed<float>(buffers, mode);
}

template <typename T>
void reduce_cpu_typed(void* buffers[]) {
  const long n = long(STARPU_VECTOR_GET_NX(buffers[0]));
  T* a = vector_ptr<T>(buffers[0]);
  const T* b = vector_ptr<const T>(buffers[1]);
  for (long k = 0; k < n; ++k) a[k] += b[k];
}

void reduce_cpu(void* buffers[], void*) {
  const codelets::Busy busy;
  if (codelets::must_skip("reduce")) return;
  if (is_double(buffers[0]))
    reduce_cpu_typed<double>(buffers);
  else
    reduce_cpu_typed<float>(buffers);
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void image_cuda_typed(void* buffers[], imaging::Mode mode) {
  codelets::check_cuda(cuda::contribution(vector_ptr<const T>(buffers[0]), vector_ptr<const T>(buffers[1]),
                                          vector_ptr<const T>(buffers[2]), vector_ptr<T>(buffers[3]),
                                          long(STARPU_VECTOR_GET_NX(buffers[0])), mode, illumination_sums(buffers),
                                          starpu_cuda_get_local_stream()),
                       "image task");
}

void image_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("image")) return;
  imaging::Mode mode;
  starpu_codelet_unpack_args(cl_arg, &mode);
  if (is_double(buffers[0]))
    image_cuda_typed<double>(buffers, mode);
  else
    image_cuda_typed<float>(buffers, mode);
}

template <typename T>
void reduce_cuda_typed(void* buffers[]) {
  codelets::check_cuda(cuda::accumulate(vector_ptr<T>(buffers[0]), vector_ptr<const T>(buffers[1]),
                                        long(STARPU_VECTOR_GET_NX(buffers[0])), starpu_cuda_get_local_stream()),
                       "reduce task");
}

void reduce_cuda(void* buffers[], void*) {
  const codelets::Busy busy;
  if (codelets::must_skip("reduce")) return;
  if (is_double(buffers[0]))
    reduce_cuda_typed<double>(buffers);
  else
    reduce_cuda_typed<float>(buffers);
}
#endif

struct starpu_codelet* image_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_image");
  static struct starpu_codelet cl = codelets::task_codelet(image_cpu, "image_cpu", STARWAVE_CUDA_FUNCTION(image_cuda),
                                                           &model, "image", {STARPU_R, STARPU_R, STARPU_R, STARPU_W});
  return &cl;
}

struct starpu_codelet* reduce_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_reduce");
  static struct starpu_codelet cl = codelets::task_codelet(
      reduce_cpu, "reduce_cpu", STARWAVE_CUDA_FUNCTION(reduce_cuda), &model, "reduce", {STARPU_RW, STARPU_R});
  return &cl;
}

}  // namespace

void insert_image(const ImageHandles& h, imaging::Mode mode, void (*done)(void*), void* arg) {
  submit_on(image_codelet(), "image", {h.correlation, h.illumination, h.velocity, h.contribution}, STARPU_VALUE, &mode,
            sizeof mode, STARPU_CALLBACK_WITH_ARG_NFREE, done, arg);  // NFREE: StarPU would free(arg)
}

void insert_reduce(starpu_data_handle_t sum, starpu_data_handle_t part) {
  submit_on(reduce_codelet(), "reduce", {sum, part});
}

}  // namespace starwave
