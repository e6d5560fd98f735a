// codelets/adjoint.cpp — StarPU glue of the adjoint task: CPU and CUDA functions that
// unpack buffers into a ShotProblem and call the kernels, the codelet and its perf model.
#include "codelets/adjoint.hpp"

#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "codelets/common.hpp"
#include "graph/submit.hpp"
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

/// The layout of an adjoint task's buffers (codelets/shot_buffers.hpp) for shot layout `p`
/// (an interval's: the one the backward sweep starts with holds the final state).
template <typename T>
codelets::ShotBuffers buffers_of(codelets::Keeps keeps, const ShotProblem<T>& p, bool source = false) {
  return codelets::adjoint_buffers(keeps, p.checkpoints_size() > 0, p.interval_end(p.store_interval) == p.nsteps,
                                   source);
}

template <typename T>
Unpacked<T> unpack(void* buffers[], ShotProblem<T> p, codelets::Keeps keeps, bool source) {
  const codelets::ShotBuffers b = buffers_of(keeps, p, source);
  p.attach_medium(vector_ptr<const T>(buffers[b.medium]));
  p.attach_nodes(vector_ptr<const long>(buffers[b.nodes]));  // nsrc and nent come with the layout
  p.attach_signals(vector_ptr<const T>(buffers[b.signals]));
  p.store = vector_ptr<T>(buffers[b.store]);
  p.work = vector_ptr<T>(buffers[b.work]);
  if (b.final_state >= 0) p.final_state = vector_ptr<T>(buffers[b.final_state]);
  if (b.checkpoints >= 0) p.checkpoints = vector_ptr<T>(buffers[b.checkpoints]);
  if (b.initial_state >= 0) {
    p.initial_state = vector_ptr<const T>(buffers[b.initial_state]);
    p.adjoint_start = vector_ptr<const T>(buffers[b.adjoint_start]);
    p.adjoint_end = vector_ptr<T>(buffers[b.adjoint_end]);
  }
  if (b.source_gradient >= 0) p.source_gradient = vector_ptr<T>(buffers[b.source_gradient]);
  return {p, vector_ptr<const T>(buffers[b.traces]), vector_ptr<T>(buffers[b.correlation]),
          vector_ptr<T>(buffers[b.illumination]), long(STARPU_VECTOR_GET_NX(buffers[b.correlation]))};
}

/// An adjoint task's parts: what it reads (the store: RW with checkpoints, whose ring it
/// rewrites), its image, its scratch; `carried`: the image's and the work's mode.
codelets::ShotParts parts_of(const AdjointHandles& h, bool checkpoints, enum starpu_data_access_mode carried) {
  return {{h.medium, STARPU_R},        {h.nodes, STARPU_R},         {h.signals, STARPU_R},
          {h.residual, STARPU_R},      {h.work, carried},           {h.store, checkpoints ? STARPU_RW : STARPU_R},
          {h.final_state, STARPU_R},   {h.checkpoints, STARPU_R},   {h.correlation, carried},
          {h.illumination, carried},   {h.initial_state, STARPU_R}, {},
          {h.adjoint_start, STARPU_R}, {h.adjoint_end, STARPU_W},   {h.source_gradient, carried}};
}

template <typename T>
void adjoint_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  const Unpacked<T> u = unpack(buffers, a.problem, a.keeps, a.source);
  const int lo = u.p.interval_begin(u.p.store_interval), hi = u.p.interval_end(u.p.store_interval);
  if (a.keeps != codelets::Keeps::kInterval || hi == u.p.nsteps) {  // W buffers (the first interval's): ours to clear
    std::memset(u.correlation, 0, std::size_t(u.region) * sizeof(T));
    std::memset(u.illumination, 0, std::size_t(u.region * u.p.illumination_sums()) * sizeof(T));
  }
  codelets::with_order(a, "adjoint", [&](auto o) {
    if (a.keeps == codelets::Keeps::kInterval)
      cpu::adjoint_steps<decltype(o)::value, T>(u.p, u.residual, hi, lo, u.correlation, u.illumination, nullptr);
    else
      cpu::adjoint<decltype(o)::value, T>(u.p, u.residual, u.correlation, u.illumination, nullptr);
  });
}

void adjoint_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("adjoint")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) {
    // The next interval's store from disk while this one runs (a split store, out of core).
    if (a.prefetch)
      starpu_data_prefetch_on_node(a.prefetch, starpu_worker_get_memory_node(unsigned(starpu_worker_get_id())), 1);
    adjoint_cpu_typed(buffers, a);
  });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void adjoint_cuda_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  Unpacked<T> u = unpack(buffers, a.problem, a.keeps, a.source);
  u.p.column_planes = codelets::cuda_column_planes();
  u.p.march_planes = codelets::cuda_march_planes();
  cudaStream_t stream = starpu_cuda_get_local_stream();
  if (pack16::zfp_rate(u.p.compression) > 0)  // the plan keeps such shots off the GPUs
    return codelets::record_failure(codelets::describe("adjoint", a) + ": a ZFP store on a CUDA worker");
  const std::string what = codelets::describe("adjoint", a);
  const int lo = u.p.interval_begin(u.p.store_interval), hi = u.p.interval_end(u.p.store_interval);
  const bool interval = a.keeps == codelets::Keeps::kInterval;
  if (!interval || hi == u.p.nsteps)
    for (T* field : {u.correlation, u.illumination}) {  // W buffers (the first interval's): ours to clear
      const long sums = field == u.illumination ? u.p.illumination_sums() : 1;
      const cudaError_t e = cudaMemsetAsync(field, 0, std::size_t(u.region * sums) * sizeof(T), stream);
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
  codelets::with_shot_args(cl_arg, [&](const auto& a) { adjoint_cuda_typed(buffers, a); });
}
#endif

#ifdef STARWAVE_USE_CUDA
constexpr codelets::TaskFunction kAdjointCuda = adjoint_cuda;
#else
constexpr codelets::TaskFunction kAdjointCuda = nullptr;
#endif

/// `checkpoints`: the adjoint that re-runs the forward from its checkpoints into the store's
/// ring (which it rewrites); its own perf model, as it costs about one forward more. `keeps`:
/// kStore; kStoreState, through states (kernels/shot.hpp), with their buffers after the others;
/// kStoreSource, its field sampled at the source too (the wavelet's gradient).
const char* const kAdjointNames[6] = {"adjoint",        "adjoint_checkpoints",
                                      "adjoint_state",  "adjoint_checkpoints_state",
                                      "adjoint_source", "adjoint_checkpoints_source"};
int adjoint_kind(bool checkpoints, codelets::Keeps keeps) {
  return (checkpoints ? 1 : 0) + (keeps == codelets::Keeps::kStoreState    ? 2
                                  : keeps == codelets::Keeps::kStoreSource ? 4
                                                                           : 0);
}
struct starpu_codelet* adjoint_codelet(int kind) {
  static struct starpu_perfmodel models[2] = {codelets::history_model("starwave_adjoint"),
                                              codelets::history_model("starwave_adjoint_checkpoints")};
  auto make = [](int k) {
    const bool ring = k % 2 == 1;
    const codelets::Keeps keeps = k >= 4   ? codelets::Keeps::kStoreSource
                                  : k >= 2 ? codelets::Keeps::kStoreState
                                           : codelets::Keeps::kStore;
    struct starpu_codelet c =
        codelets::wave_codelet(adjoint_cpu, "adjoint_cpu", kAdjointCuda, &models[k % 2], kAdjointNames[k]);
    codelets::ShotParts modes = parts_of(AdjointHandles{}, ring, STARPU_W);
    modes.work.mode = STARPU_SCRATCH;  // one per worker: a whole shot's backward state lives in it
    codelets::declare_buffers(c, codelets::adjoint_buffers(keeps, ring, true), modes);
    return c;
  };
  static struct starpu_codelet cls[6] = {make(0), make(1), make(2), make(3), make(4), make(5)};
  return &cls[kind];
}

/// `adjoint_interval`: interval j of a split store, last first, one of a shot's chain of
/// tasks that carry the adjoint's state in its work; buffers and modes given per task.
struct starpu_codelet* adjoint_interval_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_adjoint_interval");
  static struct starpu_codelet cl =
      codelets::wave_codelet(adjoint_cpu, "adjoint_cpu", kAdjointCuda, &model, "adjoint_interval");
  return &cl;
}

/// An adjoint batch's buffers: the medium, the scratch, then each shot's nodes, signals,
/// residual, store, final state, correlation and illumination.
constexpr int kBatchShared = 2, kBatchPerShot = 7;

/// Shot b of an adjoint batch task: its layout `p` with the task's buffers.
template <typename T>
Unpacked<T> unpack_batch_shot(void* buffers[], ShotProblem<T> p, int b) {
  void** shot = buffers + kBatchShared + kBatchPerShot * b;
  p.attach_medium(vector_ptr<const T>(buffers[0]));
  p.attach_nodes(vector_ptr<const long>(shot[0]));
  p.attach_signals(vector_ptr<const T>(shot[1]));
  p.store = vector_ptr<T>(shot[3]);
  p.final_state = vector_ptr<T>(shot[4]);
  p.work = vector_ptr<T>(buffers[1]) + b * p.adjoint_batch_stride();
  return {p, vector_ptr<const T>(shot[2]), vector_ptr<T>(shot[5]), vector_ptr<T>(shot[6]),
          long(STARPU_VECTOR_GET_NX(shot[5]))};
}

template <typename T>
void adjoint_batch_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a, const std::vector<ShotProblem<T>>& l) {
  codelets::with_order(a, "adjoint_batch", [&](auto o) {
    for (int b = 0; b < int(l.size()) && !codelets::failed(); ++b) {
      Unpacked<T> u = unpack_batch_shot(buffers, l[std::size_t(b)], b);
      u.p.work = vector_ptr<T>(buffers[1]);  // one shot at a time: the first shot's arrays
      std::memset(u.correlation, 0, std::size_t(u.region) * sizeof(T));
      std::memset(u.illumination, 0, std::size_t(u.region * u.p.illumination_sums()) * sizeof(T));
      cpu::adjoint<decltype(o)::value, T>(u.p, u.residual, u.correlation, u.illumination, nullptr);
    }
  });
}

void adjoint_batch_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("adjoint_batch")) return;
  codelets::with_batch_args(cl_arg,
                            [&](const auto& a, const auto& l, bool) { adjoint_batch_cpu_typed(buffers, a, l); });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void adjoint_batch_cuda_typed(void* buffers[], const codelets::ShotArgs<T>& a, const std::vector<ShotProblem<T>>& l) {
  cudaStream_t stream = starpu_cuda_get_local_stream();
  const std::string what = codelets::describe("adjoint_batch", a);
  std::vector<AdjointShot<T>> shots;
  for (int b = 0; b < int(l.size()); ++b) {
    Unpacked<T> u = unpack_batch_shot(buffers, l[std::size_t(b)], b);
    u.p.column_planes = codelets::cuda_column_planes();
    u.p.march_planes = codelets::cuda_march_planes();
    for (T* field : {u.correlation, u.illumination}) {  // W buffers: ours to clear
      const long sums = field == u.illumination ? u.p.illumination_sums() : 1;
      const cudaError_t e = cudaMemsetAsync(field, 0, std::size_t(u.region * sums) * sizeof(T), stream);
      if (e != cudaSuccess) return codelets::check_cuda(cuda::Status{int(e), "memset of the image"}, what);
    }
    shots.push_back({u.p, u.residual, u.correlation, u.illumination});
  }
  if (shots.empty()) return;
  // The entries the launches read, after the shots' work arrays (adjoint_batch_work_size).
  auto* table = reinterpret_cast<AdjointShot<T>*>(vector_ptr<T>(buffers[1]) +
                                                  shots.size() * std::size_t(shots[0].p.adjoint_batch_stride()));
  cuda::Status st;
  codelets::with_order(a, "adjoint_batch", [&](auto o) {
    st = cuda::adjoint_batch<decltype(o)::value, T>(shots.data(), int(shots.size()), table, stream);
  });
  codelets::check_cuda(st, what);
}

void adjoint_batch_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("adjoint_batch")) return;
  codelets::with_batch_args(cl_arg,
                            [&](const auto& a, const auto& l, bool) { adjoint_batch_cuda_typed(buffers, a, l); });
}
#endif

/// `adjoint_batch`: the adjoints of a batch of shots (insert_adjoint_batch); buffers and
/// their modes given per task; its own perf model.
struct starpu_codelet* adjoint_batch_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_adjoint_batch");
  static struct starpu_codelet cl = codelets::wave_codelet(
      adjoint_batch_cpu, "adjoint_batch_cpu", STARWAVE_CUDA_FUNCTION(adjoint_batch_cuda), &model, "adjoint_batch");
  return &cl;
}

}  // namespace

template <typename T>
void insert_adjoint_batch(starpu_data_handle_t medium, starpu_data_handle_t work,
                          const std::vector<BatchAdjointHandles>& shots, const std::vector<ShotProblem<T>>& problems,
                          int order) {
  if (shots.size() != problems.size() || shots.empty())
    throw graph::Refused("adjoint_batch: " + std::to_string(shots.size()) + " shots' handles for " +
                         std::to_string(problems.size()) + " layouts");
  std::vector<ShotProblem<T>> l(problems);
  for (ShotProblem<T>& p : l) {  // buffers, set at run time; no states or source gradient
    p.store = p.final_state = p.checkpoints = p.end_state = p.adjoint_end = p.source_gradient = nullptr;
    p.initial_state = p.adjoint_start = nullptr;
  }
  std::vector<struct starpu_data_descr> data = {{medium, STARPU_R}, {work, STARPU_SCRATCH}};
  for (const BatchAdjointHandles& h : shots)
    for (const auto& [handle, mode] :
         std::initializer_list<std::pair<starpu_data_handle_t, enum starpu_data_access_mode>>{
             {h.nodes, STARPU_R},
             {h.signals, STARPU_R},
             {h.residual, STARPU_R},
             {h.store, STARPU_R},
             {h.final_state, STARPU_R},
             {h.correlation, STARPU_W},
             {h.illumination, STARPU_W}})
      data.push_back({handle, mode});
  codelets::submit_batch(adjoint_batch_codelet(), "adjoint_batch", data,
                         codelets::shot_args(l[0], order, codelets::Keeps::kStore), l, false);
}

template void insert_adjoint_batch<float>(starpu_data_handle_t, starpu_data_handle_t,
                                          const std::vector<BatchAdjointHandles>&,
                                          const std::vector<ShotProblem<float>>&, int);
template void insert_adjoint_batch<double>(starpu_data_handle_t, starpu_data_handle_t,
                                           const std::vector<BatchAdjointHandles>&,
                                           const std::vector<ShotProblem<double>>&, int);

template <typename T>
void insert_adjoint_interval(const AdjointHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where) {
  codelets::ShotArgs<T> a = codelets::interval_args(layout, j, order);
  ShotProblem<T> l = layout;
  l.store_interval = j;
  const bool first = l.interval_end(j) == l.nsteps;  // the backward sweep starts with the last interval
  a.prefetch = h.next_store;
  a.source = h.source_gradient != nullptr;
  codelets::with_shot_values(a, [&](auto... values) {
    codelets::submit_with_modes(adjoint_interval_codelet(), "adjoint_interval",
                                codelets::in_order(buffers_of(codelets::Keeps::kInterval, l, a.source),
                                                   parts_of(h, false, first ? STARPU_W : STARPU_RW)),
                                where, values...);
  });
}

template void insert_adjoint_interval<float>(const AdjointHandles&, const ShotProblem<float>&, int, int, unsigned);
template void insert_adjoint_interval<double>(const AdjointHandles&, const ShotProblem<double>&, int, int, unsigned);

template <typename T>
void insert_adjoint(const AdjointHandles& h, const ShotProblem<T>& layout, int order) {
  const bool checkpoints = layout.checkpoints_size() > 0;
  const codelets::Keeps keeps = h.adjoint_end != nullptr       ? codelets::Keeps::kStoreState
                                : h.source_gradient != nullptr ? codelets::Keeps::kStoreSource
                                                               : codelets::Keeps::kStore;
  const codelets::ShotArgs<T> a = codelets::shot_args(layout, order, keeps);
  const int kind = adjoint_kind(checkpoints, keeps);
  codelets::with_shot_values(a, [&](auto... values) {
    submit_on(adjoint_codelet(kind), kAdjointNames[kind],
              codelets::handles_in_order(buffers_of(a.keeps, layout), parts_of(h, checkpoints, STARPU_W)), values...);
  });
}

template void insert_adjoint<float>(const AdjointHandles&, const ShotProblem<float>&, int);
template void insert_adjoint<double>(const AdjointHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
