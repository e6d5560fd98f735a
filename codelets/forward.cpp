// codelets/forward.cpp — StarPU glue of the forward task: CPU and CUDA functions that
// unpack buffers into a ShotProblem and call the kernels, the codelet with its
// history-based perf model, and insert_forward().
#include "codelets/forward.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "codelets/common.hpp"
#include "codelets/submit.hpp"
#include "kernels/cpu/propagate.hpp"
#include "kernels/cuda/propagate.hpp"

#ifdef STARWAVE_USE_CUDA
#include <starpu_cuda.h>
#endif

namespace starwave {
namespace {

template <typename T>
ShotProblem<T> unpack(void* buffers[], ShotProblem<T> p, int keeps) {
  const T* medium = reinterpret_cast<const T*>(STARPU_VECTOR_GET_PTR(buffers[0]));
  p.attach_medium(medium);
  const long* nodes = reinterpret_cast<const long*>(STARPU_VECTOR_GET_PTR(buffers[1]));
  p.attach_nodes(nodes);
  p.attach_signals(reinterpret_cast<const T*>(STARPU_VECTOR_GET_PTR(buffers[2])));
  p.traces = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[3]));
  p.work = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[4]));
  if (keeps == codelets::kInterval) {  // forward_interval: its interval's store, the final state after the last
    p.store = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[5]));
    if (p.interval_end(p.store_interval) == p.nsteps)
      p.final_state = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[6]));
  } else if (keeps) {  // the forward_keep codelet: the store and the final state for the adjoint
    p.store = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[5]));
    p.final_state = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[6]));
    if (p.checkpoints_size() > 0) p.checkpoints = reinterpret_cast<T*>(STARPU_VECTOR_GET_PTR(buffers[7]));
  }
  return p;
}

template <typename T>
void forward_cpu_typed(void* buffers[], const codelets::ShotArgs& a, const ShotProblem<T>& layout) {
  const ShotProblem<T> p = unpack(buffers, layout, a.keeps);
  const int lo = p.interval_begin(p.store_interval), hi = p.interval_end(p.store_interval);
  codelets::with_order(a, "forward", [&](auto o) {
    if (a.keeps == codelets::kInterval)
      cpu::forward_steps<decltype(o)::value, T>(p, lo, hi);
    else
      cpu::forward<decltype(o)::value, T>(p);
  });
}

void forward_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward")) return;
  codelets::with_shot_args(
      cl_arg, [&](const codelets::ShotArgs& a, const auto& layout) { forward_cpu_typed(buffers, a, layout); });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void forward_cuda_typed(void* buffers[], const codelets::ShotArgs& a, const ShotProblem<T>& layout) {
  ShotProblem<T> p = unpack(buffers, layout, a.keeps);
  p.column_planes = codelets::cuda_column_planes();
  p.march_planes = codelets::cuda_march_planes();
  if (codelets::device_fault_requested("forward")) return cuda::provoke_device_fault(starpu_cuda_get_local_stream());
  if (pack16::zfp_rate(p.compression) > 0)  // the plan keeps such shots off the GPUs
    return codelets::record_failure(codelets::describe("forward", a) + ": a ZFP store on a CUDA worker");
  cuda::Status st;
  const int lo = p.interval_begin(p.store_interval), hi = p.interval_end(p.store_interval);
  codelets::with_order(a, "forward", [&](auto o) {
    st = a.keeps == codelets::kInterval
             ? cuda::forward_steps<decltype(o)::value, T>(p, lo, hi, starpu_cuda_get_local_stream())
             : cuda::forward<decltype(o)::value, T>(p, starpu_cuda_get_local_stream());
  });
  codelets::check_cuda(st, codelets::describe("forward", a));
}

void forward_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("forward")) return;
  codelets::with_shot_args(
      cl_arg, [&](const codelets::ShotArgs& a, const auto& layout) { forward_cuda_typed(buffers, a, layout); });
}
#endif

#ifdef STARWAVE_USE_CUDA
constexpr codelets::TaskFunction kForwardCuda = forward_cuda;
#else
constexpr codelets::TaskFunction kForwardCuda = nullptr;
#endif

/// `keep`: the forward of a gradient or an image, which also writes the store and the
/// final state (docs/design.md §3); its own perf model, as it costs more; `checkpoints`: and
/// the forward's states.
struct starpu_codelet* forward_codelet(bool keep, bool checkpoints) {
  static struct starpu_perfmodel models[3] = {codelets::history_model("starwave_forward"),
                                              codelets::history_model("starwave_forward_keep"),
                                              codelets::history_model("starwave_forward_checkpoints")};
  static struct starpu_codelet cls[3];
  static const bool ready = [] {
    const char* names[3] = {"forward", "forward_keep", "forward_checkpoints"};
    for (int k = 0; k < 3; ++k) {
      struct starpu_codelet& c = cls[k];
      c = codelets::wave_codelet(forward_cpu, "forward_cpu", kForwardCuda, &models[k], names[k]);
      c.nbuffers = k == 0 ? 5 : k == 1 ? 7 : 8;
      c.modes[0] = STARPU_R;
      c.modes[1] = STARPU_R;
      c.modes[2] = STARPU_R;
      c.modes[3] = STARPU_W;
      c.modes[4] = STARPU_SCRATCH;
      c.modes[5] = STARPU_W;
      c.modes[6] = STARPU_W;
      c.modes[7] = STARPU_W;
    }
    return true;
  }();
  (void)ready;
  return &cls[!keep ? 0 : checkpoints ? 2 : 1];
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

}  // namespace

template <typename T>
void insert_forward_interval(const ForwardHandles& h, const ShotProblem<T>& layout, int j, int order, unsigned where) {
  codelets::ShotArgs a = codelets::interval_args(layout, j, order);
  const bool first = j == 0, last = layout.interval_end(j) == layout.nsteps;
  std::vector<struct starpu_data_descr> data = {
      {h.medium, STARPU_R},
      {h.nodes, STARPU_R},
      {h.signals, STARPU_R},
      {h.traces, first ? STARPU_W : STARPU_RW},  // each interval's samples
      {h.work, first ? STARPU_W : STARPU_RW},    // the shot's state, from one interval to the next
      {h.store, STARPU_W}};
  if (last) data.push_back({h.final_state, STARPU_W});
  codelets::submit_with_modes(forward_interval_codelet(), "forward_interval", std::move(data), where, STARPU_VALUE, &a,
                              sizeof a);
}

template void insert_forward_interval<float>(const ForwardHandles&, const ShotProblem<float>&, int, int, unsigned);
template void insert_forward_interval<double>(const ForwardHandles&, const ShotProblem<double>&, int, int, unsigned);

template <typename T>
void insert_forward(const ForwardHandles& h, const ShotProblem<T>& layout, int order) {
  ShotProblem<T> l = layout;
  const bool keep = h.store != nullptr;
  l.store = l.final_state = l.checkpoints = nullptr;  // buffers, set at run time
  if (!keep) l.checkpoint_every = 0;
  codelets::ShotArgs a = codelets::shot_args(l, order);
  a.keeps = keep;
  if (keep && l.checkpoints_size() > 0)
    submit_on(forward_codelet(true, true), "forward_checkpoints",
              {h.medium, h.nodes, h.signals, h.traces, h.work, h.store, h.final_state, h.checkpoints}, STARPU_VALUE, &a,
              sizeof a);
  else if (keep)
    submit_on(forward_codelet(true, false), "forward_keep",
              {h.medium, h.nodes, h.signals, h.traces, h.work, h.store, h.final_state}, STARPU_VALUE, &a, sizeof a);
  else
    submit_on(forward_codelet(false, false), "forward", {h.medium, h.nodes, h.signals, h.traces, h.work}, STARPU_VALUE,
              &a, sizeof a);
}

template void insert_forward<float>(const ForwardHandles&, const ShotProblem<float>&, int);
template void insert_forward<double>(const ForwardHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
