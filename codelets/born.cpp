// codelets/born.cpp — StarPU glue of the born task: the CPU function that unpacks its buffers
// into the background's and the scattered field's ShotProblems and calls cpu::born, the
// codelet with its history-based perf model, and insert_born().
#include "codelets/born.hpp"

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cpu/born.hpp"

namespace starwave {
namespace {

enum BornBuffer { kMedium, kScatter, kNodes, kSignals, kTraces, kWork, kBornBuffers };

template <typename T>
void born_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  using codelets::vector_ptr;
  ShotProblem<T> p = a.problem;
  p.attach_medium(vector_ptr<const T>(buffers[kMedium]));
  p.attach_nodes(vector_ptr<const long>(buffers[kNodes]));
  p.attach_signals(vector_ptr<const T>(buffers[kSignals]));
  T* work = vector_ptr<T>(buffers[kWork]);
  ShotProblem<T> d = p;  // the scattered field: its own work arrays, the Born traces
  p.traces = nullptr;
  p.work = work;
  d.work = work + p.work_size();
  d.traces = vector_ptr<T>(buffers[kTraces]);
  codelets::with_order(a, "born", [&](auto o) {
    cpu::born<decltype(o)::value, T>(p, d, vector_ptr<const T>(buffers[kScatter]), work + 2 * p.work_size());
  });
}

void born_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("born")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { born_cpu_typed(buffers, a); });
}

struct starpu_codelet* born_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_born");
  static struct starpu_codelet cl =
      codelets::task_codelet(born_cpu, "born_cpu", nullptr, &model, "born",
                             {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH});
  static_assert(kBornBuffers == 6, "the codelet's modes follow BornBuffer");
  return &cl;
}

}  // namespace

template <typename T>
void insert_born(const BornHandles& h, const ShotProblem<T>& layout, int order) {
  ShotProblem<T> l = layout;
  l.store = l.final_state = l.checkpoints = nullptr;
  l.checkpoint_every = 0;
  const codelets::ShotArgs<T> a = codelets::shot_args(l, order, codelets::Keeps::kTraces);
  codelets::with_shot_values(a, [&](auto... values) {
    submit_on(born_codelet(), "born", {h.medium, h.scatter, h.nodes, h.signals, h.traces, h.work}, values...);
  });
}

template void insert_born<float>(const BornHandles&, const ShotProblem<float>&, int);
template void insert_born<double>(const BornHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
