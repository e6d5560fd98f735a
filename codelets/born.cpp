// codelets/born.cpp — StarPU glue of the born task: the CPU and CUDA functions that unpack its
// buffers into the background's and the scattered field's ShotProblems and call cpu::born or
// cuda::born_steps, the codelet with its history-based perf model, and insert_born().
#include "codelets/born.hpp"

#include <vector>

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cpu/born.hpp"
#include "kernels/cuda/propagate.hpp"

namespace starwave {
namespace {

// A born task's buffers; born_keep adds u's store and final state, born_checkpoints its
// checkpoints too.
enum BornBuffer { kMedium, kScatter, kNodes, kSignals, kTraces, kWork, kBornBuffers };
enum BornKeepBuffer { kStore = kBornBuffers, kFinalState, kKeepBuffers, kCheckpoints = kKeepBuffers };

/// The background's (`p`) and the scattered field's (`d`) problems over a task's buffers (host
/// or device memory alike): the work buffer holds u's work arrays, then δu's.
template <typename T>
void unpack(void* buffers[], const codelets::ShotArgs<T>& a, ShotProblem<T>& p, ShotProblem<T>& d) {
  using codelets::vector_ptr;
  p = a.problem;
  p.attach_medium(vector_ptr<const T>(buffers[kMedium]));
  p.attach_nodes(vector_ptr<const long>(buffers[kNodes]));
  p.attach_signals(vector_ptr<const T>(buffers[kSignals]));
  T* work = vector_ptr<T>(buffers[kWork]);
  d = p;  // the scattered field: its own work arrays, the Born traces
  p.traces = nullptr;
  p.work = work;
  d.work = work + p.work_size();
  d.traces = vector_ptr<T>(buffers[kTraces]);
  if (a.keeps == codelets::Keeps::kStore) {
    p.store = vector_ptr<T>(buffers[kStore]);
    p.final_state = vector_ptr<T>(buffers[kFinalState]);
    if (p.checkpoints_size() > 0) p.checkpoints = vector_ptr<T>(buffers[kCheckpoints]);
  }
}

template <typename T>
void born_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  ShotProblem<T> p, d;
  unpack(buffers, a, p, d);
  codelets::with_order(a, "born", [&](auto o) {
    cpu::born<decltype(o)::value, T>(p, d, codelets::vector_ptr<const T>(buffers[kScatter]),
                                     p.work + 2 * p.work_size());
  });
}

void born_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("born")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { born_cpu_typed(buffers, a); });
}

#ifdef STARWAVE_USE_CUDA
template <typename T>
void born_cuda_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  ShotProblem<T> p, d;
  unpack(buffers, a, p, d);
  if (pack16::zfp_rate(p.compression) > 0)  // the plan keeps such shots off the GPUs
    return codelets::record_failure(codelets::describe("born", a) + ": a ZFP store on a CUDA worker");
  cuda::Status st;
  codelets::with_order(a, "born", [&](auto o) {
    st = cuda::born_steps<decltype(o)::value, T>(p, d, codelets::vector_ptr<const T>(buffers[kScatter]), 0, p.nsteps,
                                                 starpu_cuda_get_local_stream());
  });
  codelets::check_cuda(st, codelets::describe("born", a));
}

void born_cuda(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("born")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { born_cuda_typed(buffers, a); });
}
#endif

/// `keep`: the born task that also keeps u's store and final state, `checkpoints` and its
/// checkpoints; each its own perf model, as they cost more.
struct starpu_codelet* born_codelet(bool keep, bool checkpoints) {
  static struct starpu_perfmodel models[3] = {codelets::history_model("starwave_born"),
                                              codelets::history_model("starwave_born_keep"),
                                              codelets::history_model("starwave_born_checkpoints")};
  static struct starpu_codelet cls[3] = {
      codelets::task_codelet(born_cpu, "born_cpu", STARWAVE_CUDA_FUNCTION(born_cuda), &models[0], "born",
                             {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH}),
      codelets::task_codelet(born_cpu, "born_cpu", STARWAVE_CUDA_FUNCTION(born_cuda), &models[1], "born_keep",
                             {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH, STARPU_W, STARPU_W}),
      codelets::task_codelet(
          born_cpu, "born_cpu", STARWAVE_CUDA_FUNCTION(born_cuda), &models[2], "born_checkpoints",
          {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH, STARPU_W, STARPU_W, STARPU_W})};
  static_assert(kBornBuffers == 6 && kKeepBuffers == 8, "the codelets' modes follow BornBuffer, BornKeepBuffer");
  static const bool ready = [] {  // the wave tasks' worker choice (the memory plan's, the schedulers')
    for (struct starpu_codelet& c : cls) c.can_execute = codelets::wave_task_can_execute;
    return true;
  }();
  (void)ready;
  return &cls[!keep ? 0 : checkpoints ? 2 : 1];
}

}  // namespace

template <typename T>
void insert_born(const BornHandles& h, const ShotProblem<T>& layout, int order) {
  ShotProblem<T> l = layout;
  const bool keep = h.store != nullptr;
  l.store = l.final_state = l.checkpoints = nullptr;  // buffers, set at run time
  if (!keep) l.checkpoint_every = 0;
  const bool checkpoints = keep && l.checkpoints_size() > 0;
  const codelets::ShotArgs<T> a =
      codelets::shot_args(l, order, keep ? codelets::Keeps::kStore : codelets::Keeps::kTraces);
  std::vector<starpu_data_handle_t> handles{h.medium, h.scatter, h.nodes, h.signals, h.traces, h.work};
  if (keep) handles.insert(handles.end(), {h.store, h.final_state});
  if (checkpoints) handles.push_back(h.checkpoints);
  const char* name = checkpoints ? "born_checkpoints" : keep ? "born_keep" : "born";
  codelets::with_shot_values(
      a, [&](auto... values) { submit_on(born_codelet(keep, checkpoints), name, handles, values...); });
}

template void insert_born<float>(const BornHandles&, const ShotProblem<float>&, int);
template void insert_born<double>(const BornHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
