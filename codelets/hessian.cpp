// codelets/hessian.cpp — StarPU glue of the hessian task: the CPU function that unpacks its
// buffers and calls cpu::hessian, the codelet with its history-based perf model, and
// insert_hessian().
#include "codelets/hessian.hpp"

#include <vector>

#include "codelets/common.hpp"
#include "graph/submit.hpp"
#include "kernels/cpu/hessian.hpp"

namespace starwave {
namespace {

enum HessianBuffer { kMedium, kScatter, kNodes, kSignals, kInputs, kOutputs, kWork, kHessianBuffers };

template <typename T>
void hessian_cpu_typed(void* buffers[], const codelets::ShotArgs<T>& a) {
  using codelets::vector_ptr;
  ShotProblem<T> p = a.problem;
  p.attach_medium(vector_ptr<const T>(buffers[kMedium]));
  p.attach_nodes(vector_ptr<const long>(buffers[kNodes]));
  p.attach_signals(vector_ptr<const T>(buffers[kSignals]));
  const T* inputs = vector_ptr<const T>(buffers[kInputs]);
  codelets::with_order(a, "hessian", [&](auto o) {
    cpu::hessian<decltype(o)::value, T>(p, vector_ptr<const T>(buffers[kScatter]), inputs,
                                        vector_ptr<T>(buffers[kOutputs]), vector_ptr<T>(buffers[kWork]));
  });
}

void hessian_cpu(void* buffers[], void* cl_arg) {
  const codelets::Busy busy;
  if (codelets::must_skip("hessian")) return;
  codelets::with_shot_args(cl_arg, [&](const auto& a) { hessian_cpu_typed(buffers, a); });
}

struct starpu_codelet* hessian_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_hessian");
  static struct starpu_codelet cl =
      codelets::task_codelet(hessian_cpu, "hessian_cpu", nullptr, &model, "hessian",
                             {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_SCRATCH});
  static_assert(kHessianBuffers == 7, "the codelet's modes follow HessianBuffer");
  return &cl;
}

}  // namespace

template <typename T>
void insert_hessian(const HessianHandles& h, const ShotProblem<T>& layout, int order) {
  ShotProblem<T> l = layout;
  l.store = l.final_state = l.checkpoints = nullptr;
  l.checkpoint_every = 0;
  const codelets::ShotArgs<T> a = codelets::shot_args(l, order, codelets::Keeps::kTraces);
  const std::vector<starpu_data_handle_t> handles{h.medium, h.scatter, h.nodes, h.signals, h.inputs, h.outputs, h.work};
  codelets::with_shot_values(a, [&](auto... values) { submit_on(hessian_codelet(), "hessian", handles, values...); });
}

template void insert_hessian<float>(const HessianHandles&, const ShotProblem<float>&, int);
template void insert_hessian<double>(const HessianHandles&, const ShotProblem<double>&, int);

}  // namespace starwave
