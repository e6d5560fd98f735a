// codelets/forward.cpp — StarPU glue of the forward task: CPU and CUDA functions that
// unpack buffers into a ShotProblem and call the kernels, the codelet with its
// history-based perf model, and insert_forward().
#include "codelets/forward.hpp"

#include <cstdint>
#include <cstring>

#include "codelets/submit.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/cuda/propagate.hpp"

#ifdef STARWAVE_USE_CUDA
#include <starpu_cuda.h>
#endif

namespace starwave {
namespace {

struct ForwardArgs {
  int order;
  int is_double;
  ShotProblem<float> f;
  ShotProblem<double> d;
};

template <typename T>
ShotProblem<T> unpack(void* buffers[], ShotProblem<T> p) {
  const T* medium = reinterpret_cast<const T*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  p.attach_medium(medium);
  const long* nodes = reinterpret_cast<const long*>(STARPU_VECTOR_GET_PTR(buffers[1]));
  p.receiver_index = nodes + 1;
  p.source = reinterpret_cast<const T*>(STARPU_VECTOR_GET_PTR(buffers[2]));
  p.traces = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[3]));
  p.work = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[4]));
  return p;
}

template <typename F>
void with_order(int order, F&& f) {
  switch (order) {
    case 2:
      f(std::integral_constant<int, 2>{});
      break;
    case 4:
      f(std::integral_constant<int, 4>{});
      break;
    case 6:
      f(std::integral_constant<int, 6>{});
      break;
    default:
      f(std::integral_constant<int, 8>{});
      break;
  }
}

template <typename T>
void forward_cpu_typed(void* buffers[], const ForwardArgs& a, const ShotProblem<T>& layout) {
  const ShotProblem<T> p = unpack(buffers, layout);
  with_order(a.order, [&](auto o) { cpu::forward<decltype(o)::value, T>(p); });
}

void forward_cpu(void* buffers[], void* cl_arg) {
  ForwardArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  if (a.is_double)
    forward_cpu_typed<double>(buffers, a, a.d);
  else
    forward_cpu_typed<float>(buffers, a, a.f);
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void forward_cuda_typed(void* buffers[], const ForwardArgs& a, const ShotProblem<T>& layout) {
  const ShotProblem<T> p = unpack(buffers, layout);
  int err = 0;
  with_order(a.order, [&](auto o) { err = cuda::forward<decltype(o)::value, T>(p, starpu_cuda_get_local_stream()); });
  if (err != 0) STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(err));
}

void forward_cuda(void* buffers[], void* cl_arg) {
  ForwardArgs a;
  starpu_codelet_unpack_args(cl_arg, &a);
  if (a.is_double)
    forward_cuda_typed<double>(buffers, a, a.d);
  else
    forward_cuda_typed<float>(buffers, a, a.f);
}
#endif

struct starpu_perfmodel* forward_model() {
  static struct starpu_perfmodel model = [] {
    struct starpu_perfmodel m;
    std::memset(&m, 0, sizeof m);
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "starwave_forward";
    return m;
  }();
  return &model;
}

struct starpu_codelet* forward_codelet() {
  static struct starpu_codelet cl = [] {
    struct starpu_codelet c;
    starpu_codelet_init(&c);
    c.cpu_funcs[0] = forward_cpu;
    c.cpu_funcs_name[0] = "forward_cpu";
#ifdef STARWAVE_USE_CUDA
    c.cuda_funcs[0] = forward_cuda;
    c.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    c.nbuffers = 5;
    c.modes[0] = STARPU_R;
    c.modes[1] = STARPU_R;
    c.modes[2] = STARPU_R;
    c.modes[3] = STARPU_W;
    c.modes[4] = STARPU_SCRATCH;
    c.model = forward_model();
    c.name = "forward";
    return c;
  }();
  return &cl;
}

}  // namespace

template <typename T>
void insert_forward(const ForwardHandles& h, const ShotProblem<T>& layout, int order) {
  ForwardArgs a{};
  a.order = order;
  a.is_double = sizeof(T) == sizeof(double);
  if constexpr (sizeof(T) == sizeof(double))
    a.d = layout;
  else
    a.f = layout;
  submit_task(forward_codelet(), "forward", STARPU_R, h.medium, STARPU_R, h.nodes, STARPU_R, h.source, STARPU_W,
              h.traces, STARPU_SCRATCH, h.work, STARPU_VALUE, &a, sizeof a);
}

template void insert_forward<float>(const ForwardHandles&, const ShotProblem<float>&, int);
template void insert_forward<double>(const ForwardHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
