// codelets/common.hpp — small pieces every codelet file uses: the compile-time stencil
// order from a run-time one, history-based perf models, and the CUDA error report.
#pragma once

#include <starpu.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "codelets/failure.hpp"
#include "codelets/shot_buffers.hpp"
#include "graph/data.hpp"
#include "graph/submit.hpp"
#include "kernels/cuda/propagate.hpp"
#include "kernels/orders.hpp"
#include "kernels/shot.hpp"

#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>
#include <starpu_cuda.h>
#endif

namespace starwave::codelets {

/// A history-based perf model (StarPU keeps its samples under $STARPU_HOME); `symbol`
/// must be a string literal.
inline struct starpu_perfmodel history_model(const char* symbol) {
  struct starpu_perfmodel m;
  std::memset(&m, 0, sizeof m);
  m.type = STARPU_HISTORY_BASED;
  m.symbol = symbol;
  return m;
}

/// can_execute of the wave tasks (forward, adjoint): in a run with CUDA workers and a
/// scheduler that plans with perf models (dmda and its kin), a CPU worker takes a shot
/// only once StarPU knows how long that shot takes on a CPU. Until then `dmda` would send
/// it shots to measure them, and one 3-D shot on a CPU core costs ~100 on a GPU: the run
/// would end when the CPU's shots do (docs/gpu.md). A CPU-only run (STARPU_NCUDA=0)
/// measures the CPU's speed for later runs; `eager` and the other greedy schedulers give
/// every worker shots, as they always do. Either kind takes none when the memory plan says
/// a shot does not fit its memory (graph::take_shots_on).
inline int wave_task_can_execute(unsigned workerid, struct starpu_task* task, unsigned nimpl) {
  const bool cpu = starpu_worker_get_type(int(workerid)) == STARPU_CPU_WORKER;
  if (!graph::takes_shots(cpu)) return 0;
  if (!cpu || starpu_cuda_worker_get_count() == 0) return 1;
  const struct starpu_sched_policy* policy = starpu_sched_ctx_get_sched_policy(task->sched_ctx);
  const char* name = policy && policy->policy_name ? policy->policy_name : "";
  const bool plans = std::strncmp(name, "dm", 2) == 0 || std::strstr(name, "heft") != nullptr;
  if (!plans) return 1;
  struct starpu_perfmodel_arch* arch = starpu_worker_get_perf_archtype(int(workerid), task->sched_ctx);
  return arch && !std::isnan(starpu_task_expected_length(task, arch, nimpl)) ? 1 : 0;
}

/// A codelet's task function (CPU or CUDA).
using TaskFunction = void (*)(void* buffers[], void* cl_arg);

/// A task's CUDA function where CUDA is compiled in, else none.
#ifdef STARWAVE_USE_CUDA
#define STARWAVE_CUDA_FUNCTION(f) (f)
#else
#define STARWAVE_CUDA_FUNCTION(f) nullptr
#endif

/// A task's codelet, the one way they are made: the CPU function `cpu`, named `cpu_name`
/// (StarPU keys perf models by it), the CUDA one (asynchronous; null: none), `model` and
/// `name`, and its buffers' access modes (none given: the buffers given per task,
/// STARPU_VARIABLE_NBUFFERS).
inline struct starpu_codelet task_codelet(TaskFunction cpu, const char* cpu_name, TaskFunction cuda,
                                          struct starpu_perfmodel* model, const char* name,
                                          std::initializer_list<enum starpu_data_access_mode> modes = {}) {
  struct starpu_codelet c;
  starpu_codelet_init(&c);
  c.cpu_funcs[0] = cpu;
  c.cpu_funcs_name[0] = cpu_name;
  if (cuda) {
    c.cuda_funcs[0] = cuda;
    c.cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
  c.nbuffers = modes.size() == 0 ? STARPU_VARIABLE_NBUFFERS : int(modes.size());
  int i = 0;
  for (const enum starpu_data_access_mode m : modes) c.modes[i++] = m;
  c.model = model;
  c.name = name;
  return c;
}

/// A wave task's codelet (forward, adjoint): task_codelet's with the buffers given per task
/// and the wave tasks' can_execute.
inline struct starpu_codelet wave_codelet(TaskFunction cpu, const char* cpu_name, TaskFunction cuda,
                                          struct starpu_perfmodel* model, const char* name) {
  struct starpu_codelet c = task_codelet(cpu, cpu_name, cuda, model, name);
  c.can_execute = wave_task_can_execute;
  return c;
}

#ifdef STARWAVE_USE_CUDA
/// Planes per interior run of the CUDA u and μ launches (ShotProblem::column_planes):
/// STARWAVE_CUDA_COLUMN_PLANES, a tuning knob for benchmarks on a device (1: one cell a
/// thread; the bits do not depend on it); 0 (unset): the launches' default (kColumnWindow).
inline int cuda_column_planes() {
  static const int planes = [] {
    const char* v = std::getenv("STARWAVE_CUDA_COLUMN_PLANES");
    return v && std::atoi(v) > 0 ? std::atoi(v) : 0;
  }();
  return planes;
}

/// Planes per block of the 3-D marching u and μ launches (ShotProblem::march_planes):
/// STARWAVE_CUDA_MARCH_PLANES, a knob for benchmarks on a device (the bits do not depend on
/// it); 0 (unset, not a positive number): no marching.
inline int cuda_march_planes() {
  static const int planes = [] {
    const char* v = std::getenv("STARWAVE_CUDA_MARCH_PLANES");
    return v && std::atoi(v) > 0 ? std::atoi(v) : 0;
  }();
  return planes;
}

/// Records a CUDA launcher's failure as the task's (codelets/failure.hpp): the launch, the
/// task and the device's message, e.g. "CUDA error in forward update (forward task, order
/// 8, float): invalid configuration argument".

inline void check_cuda(const cuda::Status& s, const std::string& task) {
  if (!s)
    record_failure("CUDA error in " + std::string(s.launch ? s.launch : "a launch") + " (" + task +
                   "): " + cuda::error_string(s.code));
}
#endif

/// The value argument of the per-shot propagation tasks (forward, adjoint), in the precision
/// the task runs: the stencil order, its buffers and the shot's description. A task's values
/// are its precision (kIsDouble<T>), then these (with_shot_values packs both), so that its
/// function reads the precision first and unpacks the arguments of that type (with_shot_args).
template <typename T>
struct ShotArgs {
  int order = 0;
  Keeps keeps = Keeps::kTraces;  // its buffers beyond the shot's inputs (codelets/shot_buffers.hpp)
  ShotProblem<T> problem{};
  starpu_data_handle_t prefetch =
      nullptr;          // adjoint_interval: the next interval's store, brought towards main memory first
  bool source = false;  // adjoint_interval: with the source gradient's buffer (adjoint_buffers)
};

/// A task value's precision tag: 1 for double, 0 for float.
template <typename T>
inline constexpr int kIsDouble = sizeof(T) == sizeof(double) ? 1 : 0;

/// Calls submit(values...) with a shot task's values: its precision, then `a` (the one way
/// they are packed, as with_shot_args reads them).
template <typename T, typename Submit>
void with_shot_values(const ShotArgs<T>& a, Submit&& submit) {
  submit(STARPU_VALUE, &kIsDouble<T>, sizeof(int), STARPU_VALUE, &a, sizeof a);
}

template <typename T>
ShotArgs<T> shot_args(const ShotProblem<T>& layout, int order, Keeps keeps) {
  ShotArgs<T> a;
  a.order = order;
  a.keeps = keeps;
  a.problem = layout;
  return a;
}

/// The value argument of interval j's task of a split store (forward_interval,
/// adjoint_interval): the layout with j, its buffers set at run time.
template <typename T>
ShotArgs<T> interval_args(ShotProblem<T> l, int j, int order) {
  l.store = l.final_state = l.checkpoints = nullptr;
  l.store_interval = j;
  return shot_args(l, order, Keeps::kInterval);
}

/// "forward task, order 8, float": what a CUDA error message says of a shot task.
template <typename T>
std::string describe(const char* task, const ShotArgs<T>& a) {
  return std::string(task) + " task, order " + std::to_string(a.order) + ", " + (kIsDouble<T> ? "double" : "float");
}

/// Calls f(std::integral_constant<int, order>) for the task's stencil order; an order
/// without kernels (NumericalOptions::validate refuses it long before) fails the task.
template <typename T, typename F>
void with_order(const ShotArgs<T>& a, const char* task, F&& f) {
  if (!starwave::with_order(a.order, f)) record_failure(describe(task, a) + ": no kernels for this stencil order");
}

/// Submits a task of codelet `cl` (nbuffers STARPU_VARIABLE_NBUFFERS) on `data`, each with
/// its own access mode, restricted to the workers of `where` (STARPU_CPU, STARPU_CUDA; 0: any).
template <typename... Args>
void submit_with_modes(struct starpu_codelet* cl, const char* name, std::vector<struct starpu_data_descr> data,
                       unsigned where, Args... args) {
  if (where != 0)
    submit_task(cl, name, STARPU_DATA_MODE_ARRAY, data.data(), int(data.size()), STARPU_EXECUTE_WHERE,
                static_cast<unsigned long long>(where), args...);  // read as unsigned long long
  else
    submit_task(cl, name, STARPU_DATA_MODE_ARRAY, data.data(), int(data.size()), args...);
}

/// Unpacks a task's ShotArgs in the precision its first value names and calls f(args).
template <typename F>
void with_shot_args(void* cl_arg, F&& f) {
  int is_double = 0;
  starpu_codelet_unpack_args(cl_arg, &is_double, nullptr);  // a null pointer: the rest left packed
  if (is_double) {
    ShotArgs<double> a;
    starpu_codelet_unpack_args(cl_arg, &is_double, &a);
    f(a);
  } else {
    ShotArgs<float> a;
    starpu_codelet_unpack_args(cl_arg, &is_double, &a);
    f(a);
  }
}

/// A batch task's values in precision T (insert_forward_batch, insert_adjoint_batch): its
/// ShotArgs, the shot count n, whether its shots keep stores, then the shots' layouts; calls
/// f(args, layouts, keep). (StarPU reads as many values as it is given pointers, up to a
/// null one.)
template <typename T, typename F>
void with_batch_layouts(void* cl_arg, F&& f) {
  int is_double = 0, n = 0, keep = 0;
  ShotArgs<T> a;
  starpu_codelet_unpack_args(cl_arg, &is_double, &a, &n, &keep, nullptr);
  std::vector<ShotProblem<T>> layouts(std::size_t(n > 0 ? n : 0));
  starpu_codelet_unpack_args(cl_arg, &is_double, &a, &n, &keep, layouts.data());
  f(a, layouts, keep != 0);
}
template <typename F>
void with_batch_args(void* cl_arg, F&& f) {
  int is_double = 0;
  starpu_codelet_unpack_args(cl_arg, &is_double, nullptr);
  if (is_double)
    with_batch_layouts<double>(cl_arg, f);
  else
    with_batch_layouts<float>(cl_arg, f);
}

/// Submits a batch task: `data` its buffers, then its values (with_batch_layouts's).
template <typename T>
void submit_batch(struct starpu_codelet* cl, const char* name, const std::vector<struct starpu_data_descr>& data,
                  const ShotArgs<T>& a, const std::vector<ShotProblem<T>>& layouts, bool keep) {
  const int n = int(layouts.size()), kept = keep ? 1 : 0;
  with_shot_values(a, [&](auto... values) {
    submit_with_modes(cl, name, data, 0, values..., STARPU_VALUE, &n, sizeof n, STARPU_VALUE, &kept, sizeof kept,
                      STARPU_VALUE, layouts.data(), layouts.size() * sizeof(ShotProblem<T>));
  });
}

template <typename T>
T* vector_ptr(void* buffer) {
  return reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffer));
}

}  // namespace starwave::codelets
