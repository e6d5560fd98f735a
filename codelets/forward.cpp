// codelets/forward.cpp — StarPU glue of the forward task: CPU and CUDA functions that
// unpack buffers into a ShotProblem and call the kernels, the codelet with its
// history-based perf model, and insert_forward().
#include "codelets/forward.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/cuda/propagate.hpp"

#ifdef STARWAVE_USE_CUDA
#include <starpu_cuda.h>
#endif

namespace starwave {
namespace {

/// The layout of a forward task's buffers (codelets/shot_buffers.hpp) for shot layout `p`.
template <typename T>
codelets::ShotBuffers buffers_of(codelets::Keeps keeps, const ShotProblem<T>& p) {
  return codelets::forward_buffers(keeps, p.checkpoints_size() > 0, p.interval_end(p.store_interval) == p.nsteps);
}

template <typename T>
ShotProblem<T> unpack(void* buffers[], ShotProblem<T> p, codelets::Keeps keeps) {
  using codelets::vector_ptr;
  const codelets::ShotBuffers b = buffers_of(keeps, p);
  p.attach_medium(vector_ptr<const T>(buffers[b.medium]));
  p.attach_nodes(vector_ptr<const long>(buffers[b.nodes]));
  p.attach_signals(vector_ptr<const T>(buffers[b.signals]));
  p.traces = vector_ptr<T>(buffers[b.traces]);
  p.work = vector_ptr<T>(buffers[b.work]);
  if (b.store >= 0) p.store = vector_ptr<T>(buffers[b.store]);
  if (b.final_state >= 0) p.final_state = vector_ptr<T>(buffers[b.final_state]);
  if (b.checkpoints >= 0) p.checkpoints = vector_ptr<T>(buffers[b.checkpoints]);
  if (b.initial_state >= 0) p.initial_state = vector_ptr<const T>(buffers[b.initial_state]);
  if (b.end_state >= 0) p.end_state = vector_ptr<T>(buffers[b.end_state]);
  return p;
}

/// A forward task's parts: what it reads, its traces, its scratch and what it keeps.
codelets::ShotParts parts_of(const ForwardHandles& h, bool first_interval) {
  const enum starpu_data_access_mode carried = first_interval ? STARPU_W : STARPU_RW;
  return {{h.medium, STARPU_R},
          {h.nodes, STARPU_R},
          {h.signals, STARPU_R},
          {h.traces, carried},
          {h.work, STARPU_W},
          {h.store, STARPU_W},
          {h.final_state, STARPU_W},
          {h.checkpoints, STARPU_W},
          {},
          {},
          {h.initial_state, STARPU_R},
          {h.end_state, STARPU_W}};
}

template <typename T>
void forward_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  const ShotProblem<T> p = unpack(buffers, a.problem, a.keeps);
  const int lo = p.interval_begin(p.store_interval), hi = p.interval_end(p.store_interval);
  codelets::with_order(a, "forward", [&](auto o) {
    if (a.keeps == codelets::Keeps::kInterval)
      cpu::forward_steps<decltype(o)::value, T>(p, lo, hi);
    else
      cpu::forward<decltype(o)::value, T>(p);
  });
}

void forward_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { forward_cpu_typed(buffers, a); });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void forward_cuda_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  ShotProblem<T> p = unpack(buffers, a.problem, a.keeps);
  p.column_planes = codelets::cuda_column_planes();
  p.march_planes = codelets::cuda_march_planes();
  if (codelets::device_fault_requested("forward")) return cuda::provoke_device_fault(starpu_cuda_get_local_stream());
  if (pack16::zfp_rate(p.compression) > 0)  // the plan keeps such shots off the GPUs
    return codelets::record_failure(codelets::describe("forward", a) + ": a ZFP store on a CUDA worker");
  cuda::Status st;
  const int lo = p.interval_begin(p.store_interval), hi = p.interval_end(p.store_interval);
  codelets::with_order(a, "forward", [&](auto o) {
    st = a.keeps == codelets::Keeps::kInterval
             ? cuda::forward_steps<decltype(o)::value, T>(p, lo, hi, starpu_cuda_get_local_stream())
             : cuda::forward<decltype(o)::value, T>(p, starpu_cuda_get_local_stream());
  });
  codelets::check_cuda(st, codelets::describe("forward", a));
}

void forward_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { forward_cuda_typed(buffers, a); });
}
#endif

#ifdef STARWAVE_USE_CUDA
constexpr codelets::TaskFunction kForwardCuda = forward_cuda;
#else
constexpr codelets::TaskFunction kForwardCuda = nullptr;
#endif

/// The forward codelet for what a task keeps: its traces (`forward`); the store and the final
/// state of a gradient or an image (`forward_keep`, docs/design.md §3; with `checkpoints`, also
/// the forward's states: `forward_checkpoints`); its end state, from a given one
/// (`forward_state`). Each has its own perf model: they cost more than a forward alone.
constexpr int kForwardKinds = 6;
const char* const kForwardNames[kForwardKinds] = {"forward",       "forward_keep",       "forward_checkpoints",
                                                  "forward_state", "forward_keep_state", "forward_checkpoints_state"};
/// Its index among the codelets below.
int forward_kind(codelets::Keeps keeps, bool checkpoints) {
  if (keeps == codelets::Keeps::kState) return 3;
  if (keeps == codelets::Keeps::kStoreState) return checkpoints ? 5 : 4;
  return keeps == codelets::Keeps::kTraces ? 0 : checkpoints ? 2 : 1;
}
struct starpu_codelet* forward_codelet(codelets::Keeps keeps, bool checkpoints) {
  static struct starpu_perfmodel models[kForwardKinds] = {codelets::history_model("starwave_forward"),
                                                          codelets::history_model("starwave_forward_keep"),
                                                          codelets::history_model("starwave_forward_checkpoints"),
                                                          codelets::history_model("starwave_forward_state"),
                                                          codelets::history_model("starwave_forward_keep"),
                                                          codelets::history_model("starwave_forward_checkpoints")};
  static struct starpu_codelet cls[kForwardKinds];
  static const bool ready = [] {
    const codelets::Keeps kinds[kForwardKinds] = {codelets::Keeps::kTraces,     codelets::Keeps::kStore,
                                                  codelets::Keeps::kStore,      codelets::Keeps::kState,
                                                  codelets::Keeps::kStoreState, codelets::Keeps::kStoreState};
    codelets::ShotParts modes = parts_of(ForwardHandles{}, true);
    modes.work.mode = STARPU_SCRATCH;  // one per worker: a whole shot's state lives in it
    for (int k = 0; k < kForwardKinds; ++k) {
      struct starpu_codelet& c = cls[k];
      c = codelets::wave_codelet(forward_cpu, "forward_cpu", kForwardCuda, &models[k], kForwardNames[k]);
      codelets::declare_buffers(c, codelets::forward_buffers(kinds[k], k == 2 || k == 5, true), modes);
    }
    return true;
  }();
  (void)ready;
  return &cls[forward_kind(keeps, checkpoints)];
}

/// `forward_interval`: interval j of a split store (ShotProblem::split_store), one of a
/// shot's chain of tasks that carry its state in `work`; buffers and their modes given per
/// task (insert_forward_interval); its own perf model.
struct starpu_codelet* forward_interval_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_forward_interval");
  static struct starpu_codelet cl =
      codelets::wave_codelet(forward_cpu, "forward_cpu", kForwardCuda, &model, "forward_interval");
  return &cl;
}

/// A batch's buffers: the medium, the scratch, then each shot's nodes, signals and traces,
/// and (a gradient's, `keep`) its store and final state.
constexpr int kBatchShared = 2;
int batch_per_shot(bool keep) { return keep ? 5 : 3; }

/// Shot b of a batch task: its layout `p` with the task's buffers.
template <typename T>
ShotProblem<T> unpack_batch_shot(void* buffers[], ShotProblem<T> p, int b, bool keep) {
  using codelets::vector_ptr;
  void** shot = buffers + kBatchShared + batch_per_shot(keep) * b;
  p.attach_medium(vector_ptr<const T>(buffers[0]));
  p.attach_nodes(vector_ptr<const long>(shot[0]));
  p.attach_signals(vector_ptr<const T>(shot[1]));
  p.traces = vector_ptr<T>(shot[2]);
  p.work = vector_ptr<T>(buffers[1]) + b * p.batch_stride();
  if (keep) {
    p.store = vector_ptr<T>(shot[3]);
    p.final_state = vector_ptr<T>(shot[4]);
  }
  return p;
}

template <typename T>
void forward_batch_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a, const std::vector<ShotProblem<T>>& l,
                             bool keep) {
  codelets::with_order(a, "forward_batch", [&](auto o) {
    for (int b = 0; b < int(l.size()) && !codelets::failed(); ++b) {
      ShotProblem<T> p = unpack_batch_shot(buffers, l[std::size_t(b)], b, keep);
      p.work = codelets::vector_ptr<T>(buffers[1]);  // one shot at a time: the first shot's arrays
      cpu::forward<decltype(o)::value, T>(p);
    }
  });
}

void forward_batch_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward_batch")) return;
  codelets::with_batch_args(
      cl_arg, [&](const auto& a, const auto& l, bool keep) { forward_batch_cpu_typed(buffers, a, l, keep); });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void forward_batch_cuda_typed(void* buffers[], const codelets::ShotArgs<T>& a, const std::vector<ShotProblem<T>>& l,
                              bool keep) {
  std::vector<ShotProblem<T>> shots;
  for (int b = 0; b < int(l.size()); ++b) {
    shots.push_back(unpack_batch_shot(buffers, l[std::size_t(b)], b, keep));
    shots.back().column_planes = codelets::cuda_column_planes();
    shots.back().march_planes = codelets::cuda_march_planes();
  }
  if (shots.empty()) return;
  if (codelets::device_fault_requested("forward")) return cuda::provoke_device_fault(starpu_cuda_get_local_stream());
  // The layouts the launches read, after the shots' work arrays (ShotProblem::batch_work_size).
  auto* table = reinterpret_cast<ShotProblem<T>*>(codelets::vector_ptr<T>(buffers[1]) +
                                                  std::size_t(shots.size()) * std::size_t(shots[0].batch_stride()));
  cuda::Status st;
  codelets::with_order(a, "forward_batch", [&](auto o) {
    st = cuda::forward_batch<decltype(o)::value, T>(shots.data(), int(shots.size()), table,
                                                    starpu_cuda_get_local_stream());
  });
  codelets::check_cuda(st, codelets::describe("forward_batch", a));
}

void forward_batch_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward_batch")) return;
  codelets::with_batch_args(
      cl_arg, [&](const auto& a, const auto& l, bool keep) { forward_batch_cuda_typed(buffers, a, l, keep); });
}
#endif

/// `forward_batch`: the forwards of a batch of shots (insert_forward_batch); buffers and
/// their modes given per task; its own perf model; `forward_keep_batch`, with stores.
struct starpu_codelet* forward_batch_codelet(bool keep) {
  static struct starpu_perfmodel models[2] = {codelets::history_model("starwave_forward_batch"),
                                              codelets::history_model("starwave_forward_keep_batch")};
  static struct starpu_codelet cls[2] = {
      codelets::wave_codelet(forward_batch_cpu, "forward_batch_cpu", STARWAVE_CUDA_FUNCTION(forward_batch_cuda),
                             &models[0], "forward_batch"),
      codelets::wave_codelet(forward_batch_cpu, "forward_batch_cpu", STARWAVE_CUDA_FUNCTION(forward_batch_cuda),
                             &models[1], "forward_keep_batch")};
  return &cls[keep ? 1 : 0];
}

}  // namespace

template <typename T>
void insert_forward_batch(starpu_data_handle_t medium, starpu_data_handle_t work,
                          const std::vector<BatchShotHandles>& shots, const std::vector<ShotProblem<T>>& problems,
                          int order) {
  if (shots.size() != problems.size() || shots.empty())
    throw graph::Refused("forward_batch: " + std::to_string(shots.size()) + " shots' handles for " +
                         std::to_string(problems.size()) + " layouts");
  const bool keep = shots[0].store != nullptr;
  std::vector<ShotProblem<T>> l(problems);
  for (ShotProblem<T>& p : l) {
    p.store = p.final_state = p.checkpoints = p.end_state = nullptr;
    p.initial_state = nullptr;
    if (!keep) p.checkpoint_every = 0;
  }
  std::vector<struct starpu_data_descr> data = {{medium, STARPU_R}, {work, STARPU_SCRATCH}};
  for (const BatchShotHandles& h : shots) {
    if ((h.store != nullptr) != keep || (h.final_state != nullptr) != keep)
      throw graph::Refused("forward_batch: some shots keep a store and a final state, others do not");
    data.push_back({h.nodes, STARPU_R});
    data.push_back({h.signals, STARPU_R});
    data.push_back({h.traces, STARPU_W});
    if (keep) {
      data.push_back({h.store, STARPU_W});
      data.push_back({h.final_state, STARPU_W});
    }
  }
  codelets::submit_batch(forward_batch_codelet(keep), keep ? "forward_keep_batch" : "forward_batch", data,
                         codelets::shot_args(l[0], order, keep ? codelets::Keeps::kStore : codelets::Keeps::kTraces), l,
                         keep);
}

template void insert_forward_batch<float>(starpu_data_handle_t, starpu_data_handle_t,
                                          const std::vector<BatchShotHandles>&, const std::vector<ShotProblem<float>>&,
                                          int);
template void insert_forward_batch<double>(starpu_data_handle_t, starpu_data_handle_t,
                                           const std::vector<BatchShotHandles>&,
                                           const std::vector<ShotProblem<double>>&, int);

template <typename T>
void insert_forward_interval(const ForwardHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where) {
  const codelets::ShotArgs<T> a = codelets::interval_args(layout, j, order);
  codelets::ShotParts parts = parts_of(h, j == 0);
  parts.work.mode = parts.traces.mode;  // the shot's state, from one interval to the next, as its samples
  ShotProblem<T> l = layout;
  l.store_interval = j;
  codelets::with_shot_values(a, [&](auto... values) {
    codelets::submit_with_modes(forward_interval_codelet(), "forward_interval",
                                codelets::in_order(buffers_of(codelets::Keeps::kInterval, l), parts), where, values...);
  });
}

template void insert_forward_interval<float>(const ForwardHandles&, const ShotProblem<float>&, int, int, unsigned);
template void insert_forward_interval<double>(const ForwardHandles&, const ShotProblem<double>&, int, int, unsigned);

template <typename T>
void insert_forward(const ForwardHandles& h, const ShotProblem<T>& layout, int order) {
  ShotProblem<T> l = layout;
  const bool keep = h.store != nullptr, state = h.end_state != nullptr, from = h.initial_state != nullptr;
  l.store = l.final_state = l.checkpoints = l.end_state = nullptr;  // buffers, set at run time
  l.initial_state = nullptr;
  if (!keep) l.checkpoint_every = 0;
  const codelets::Keeps keeps = state          ? codelets::Keeps::kState
                                : keep && from ? codelets::Keeps::kStoreState
                                : keep         ? codelets::Keeps::kStore
                                               : codelets::Keeps::kTraces;
  const codelets::ShotArgs<T> a = codelets::shot_args(l, order, keeps);
  const bool checkpoints = keep && l.checkpoints_size() > 0;
  const char* name = kForwardNames[forward_kind(keeps, checkpoints)];
  codelets::with_shot_values(a, [&](auto... values) {
    submit_on(forward_codelet(keeps, checkpoints), name,
              codelets::handles_in_order(buffers_of(a.keeps, l), parts_of(h, true)), values...);
  });
}

template void insert_forward<float>(const ForwardHandles&, const ShotProblem<float>&, int);
template void insert_forward<double>(const ForwardHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
