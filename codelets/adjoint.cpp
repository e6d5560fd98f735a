// codelets/adjoint.cpp — StarPU glue of the adjoint task: CPU and CUDA functions that
// unpack buffers into a ShotProblem and call the kernels, the codelet and its perf model.
#include "codelets/adjoint.hpp"

#include <cstring>
#include <vector>

#include "codelets/common.hpp"
#include "codelets/submit.hpp"
#include "kernels/cpu/adjoint.hpp"
#include "kernels/cuda/propagate.hpp"

namespace starwave {
namespace {

using codelets::vector_ptr;
template <typename T>
struct Unpacked {
  ShotProblem<T> p;
  const T* residual;
  T* correlation;
  T* illumination;
  long region;
};

/// adjoint_interval's buffers: medium, nodes, signals, residual, its interval's store, the
/// shot's adjoint work, correlation, illumination, and for the last interval (the first
/// run) the final state.
template <typename T>
Unpacked<T> unpack_interval(void* buffers[], ShotProblem<T> p) {
  p.attach_medium(vector_ptr<const T>(buffers[0]));
  p.attach_nodes(vector_ptr<const long>(buffers[1]));
  p.attach_signals(vector_ptr<const T>(buffers[2]));
  p.store = vector_ptr<T>(buffers[4]);
  p.work = vector_ptr<T>(buffers[5]);
  if (p.interval_end(p.store_interval) == p.nsteps) p.final_state = vector_ptr<T>(buffers[8]);
  return {p, vector_ptr<const T>(buffers[3]), vector_ptr<T>(buffers[6]), vector_ptr<T>(buffers[7]),
          long(STARPU_VECTOR_GET_NX(buffers[6]))};
}

template <typename T>
Unpacked<T> unpack(void* buffers[], ShotProblem<T> p, int keeps) {
  if (keeps == codelets::kInterval) return unpack_interval(buffers, p);
  p.attach_medium(vector_ptr<const T>(buffers[0]));
  p.attach_nodes(vector_ptr<const long>(buffers[1]));  // nsrc and nent come with the layout
  p.attach_signals(vector_ptr<const T>(buffers[2]));
  p.store = vector_ptr<T>(buffers[4]);
  p.final_state = vector_ptr<T>(buffers[5]);
  p.work = vector_ptr<T>(buffers[8]);
  if (p.checkpoints_size() > 0) p.checkpoints = vector_ptr<T>(buffers[9]);
  return {p, vector_ptr<const T>(buffers[3]), vector_ptr<T>(buffers[6]), vector_ptr<T>(buffers[7]),
          long(STARPU_VECTOR_GET_NX(buffers[6]))};
}

template <typename T>
void adjoint_cpu_typed(void* buffers[], const codelets::ShotArgs& a, const ShotProblem<T>& layout) {
  const Unpacked<T> u = unpack(buffers, layout, a.keeps);
  const int lo = u.p.interval_begin(u.p.store_interval), hi = u.p.interval_end(u.p.store_interval);
  if (a.keeps != codelets::kInterval || hi == u.p.nsteps) {  // W buffers (the first interval's): ours to clear
    std::memset(u.correlation, 0, std::size_t(u.region) * sizeof(T));
    std::memset(u.illumination, 0, std::size_t(u.region) * sizeof(T));
  }
  codelets::with_order(a, "adjoint", [&](auto o) {
    if (a.keeps == codelets::kInterval)
      cpu::adjoint_steps<decltype(o)::value, T>(u.p, u.residual, hi, lo, u.correlation, u.illumination, nullptr);
    else
      cpu::adjoint<decltype(o)::value, T>(u.p, u.residual, u.correlation, u.illumination, nullptr);
  });
}

void adjoint_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("adjoint")) return;
  codelets::with_shot_args(cl_arg, [&](const codelets::ShotArgs& a, const auto& layout) {
    // The next interval's store from disk while this one runs (a split store, out of core).
    if (a.prefetch)
      starpu_data_prefetch_on_node(a.prefetch, starpu_worker_get_memory_node(unsigned(starpu_worker_get_id())), 1);
    adjoint_cpu_typed(buffers, a, layout);
  });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void adjoint_cuda_typed(void* buffers[], const codelets::ShotArgs& a, const ShotProblem<T>& layout) {
  Unpacked<T> u = unpack(buffers, layout, a.keeps);
  u.p.column_planes = codelets::cuda_column_planes();
  u.p.march_planes = codelets::cuda_march_planes();
  cudaStream_t stream = starpu_cuda_get_local_stream();
  if (pack16::zfp_rate(u.p.compression) > 0)  // the plan keeps such shots off the GPUs
    return codelets::record_failure(codelets::describe("adjoint", a) + ": a ZFP store on a CUDA worker");
  const std::string what = codelets::describe("adjoint", a);
  const int lo = u.p.interval_begin(u.p.store_interval), hi = u.p.interval_end(u.p.store_interval);
  const bool interval = a.keeps == codelets::kInterval;
  if (!interval || hi == u.p.nsteps)
    for (T* field : {u.correlation, u.illumination}) {  // W buffers (the first interval's): ours to clear
      const cudaError_t e = cudaMemsetAsync(field, 0, std::size_t(u.region) * sizeof(T), stream);
      if (e != cudaSuccess) return codelets::check_cuda(cuda::Status{int(e), "memset of the image"}, what);
    }
  cuda::Status st;
  codelets::with_order(a, "adjoint", [&](auto o) {
    st = interval ? cuda::adjoint_steps<decltype(o)::value, T>(u.p, u.residual, hi, lo, u.correlation, u.illumination,
                                                               stream)
                  : cuda::adjoint<decltype(o)::value, T>(u.p, u.residual, u.correlation, u.illumination, stream);
  });
  codelets::check_cuda(st, what);
}

void adjoint_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("adjoint")) return;
  codelets::with_shot_args(
      cl_arg, [&](const codelets::ShotArgs& a, const auto& layout) { adjoint_cuda_typed(buffers, a, layout); });
}
#endif

#ifdef STARWAVE_USE_CUDA
constexpr codelets::TaskFunction kAdjointCuda = adjoint_cuda;
#else
constexpr codelets::TaskFunction kAdjointCuda = nullptr;
#endif

/// `checkpoints`: the adjoint that re-runs the forward from its checkpoints into the store's
/// ring (which it rewrites); its own perf model, as it costs about one forward more.
struct starpu_codelet* adjoint_codelet(bool checkpoints) {
  static struct starpu_perfmodel models[2] = {codelets::history_model("starwave_adjoint"),
                                              codelets::history_model("starwave_adjoint_checkpoints")};
  auto make = [](int k) {
    struct starpu_codelet c = codelets::wave_codelet(adjoint_cpu, "adjoint_cpu", kAdjointCuda, &models[k],
                                                     k == 0 ? "adjoint" : "adjoint_checkpoints");
    c.nbuffers = k == 0 ? 9 : 10;
    for (int i = 0; i < 6; ++i) c.modes[i] = STARPU_R;
    if (k == 1) c.modes[4] = STARPU_RW;  // the store's ring
    c.modes[6] = STARPU_W;
    c.modes[7] = STARPU_W;
    c.modes[8] = STARPU_SCRATCH;
    c.modes[9] = STARPU_R;
    return c;
  };
  static struct starpu_codelet cls[2] = {make(0), make(1)};
  return &cls[checkpoints ? 1 : 0];
}

/// `adjoint_interval`: interval j of a split store, last first, one of a shot's chain of
/// tasks that carry the adjoint's state in its work; buffers and modes given per task.
struct starpu_codelet* adjoint_interval_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_adjoint_interval");
  static struct starpu_codelet cl =
      codelets::wave_codelet(adjoint_cpu, "adjoint_cpu", kAdjointCuda, &model, "adjoint_interval");
  return &cl;
}

}  // namespace

template <typename T>
void insert_adjoint_interval(const AdjointHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where) {
  codelets::ShotArgs a = codelets::interval_args(layout, j, order);
  const bool first = layout.interval_end(j) == layout.nsteps;  // the backward sweep starts with the last interval
  const enum starpu_data_access_mode carried = first ? STARPU_W : STARPU_RW;
  std::vector<struct starpu_data_descr> data = {
      {h.medium, STARPU_R}, {h.nodes, STARPU_R}, {h.signals, STARPU_R},    {h.residual, STARPU_R},
      {h.store, STARPU_R},  {h.work, carried},   {h.correlation, carried}, {h.illumination, carried}};
  if (first) data.push_back({h.final_state, STARPU_R});
  a.prefetch = h.next_store;
  codelets::submit_with_modes(adjoint_interval_codelet(), "adjoint_interval", std::move(data), where, STARPU_VALUE, &a,
                              sizeof a);
}

template void insert_adjoint_interval<float>(const AdjointHandles&, const ShotProblem<float>&, int, int, unsigned);
template void insert_adjoint_interval<double>(const AdjointHandles&, const ShotProblem<double>&, int, int, unsigned);

template <typename T>
void insert_adjoint(const AdjointHandles& h, const ShotProblem<T>& layout, int order) {
  codelets::ShotArgs a = codelets::shot_args(layout, order);
  if (layout.checkpoints_size() > 0)
    submit_on(adjoint_codelet(true), "adjoint_checkpoints",
              {h.medium, h.nodes, h.signals, h.residual, h.store, h.final_state, h.correlation, h.illumination, h.work,
               h.checkpoints},
              STARPU_VALUE, &a, sizeof a);
  else
    submit_on(adjoint_codelet(false), "adjoint",
              {h.medium, h.nodes, h.signals, h.residual, h.store, h.final_state, h.correlation, h.illumination, h.work},
              STARPU_VALUE, &a, sizeof a);
}

template void insert_adjoint<float>(const AdjointHandles&, const ShotProblem<float>&, int);
template void insert_adjoint<double>(const AdjointHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
