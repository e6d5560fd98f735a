// codelets/step.cpp — StarPU glue of the step task (CPU only: a few vector operations
// per iteration, and the optimiser's memory lives on the host).
#include "codelets/step.hpp"

#include <algorithm>

#include "codelets/common.hpp"
#include "codelets/submit.hpp"

namespace starwave {
namespace {

using codelets::vector_ptr;

template <typename T>
void split(void* buffer, std::vector<double>& gradient, std::vector<double>& illumination) {
  const std::size_t n = STARPU_VECTOR_GET_NX(buffer) / 2;
  const T* sum = vector_ptr<const T>(buffer);
  gradient.assign(sum, sum + n);
  illumination.assign(sum + n, sum + 2 * n);
}

void step_cpu(void* buffers[], void* cl_arg) {
  if (codelets::must_skip("step")) return;  // the model stays as it was; the workflow reports why
  const StepFunction* fn;
  starpu_codelet_unpack_args(cl_arg, &fn);
  std::vector<double> gradient, illumination;
  if (STARPU_VECTOR_GET_ELEMSIZE(buffers[0]) == sizeof(double))
    split<double>(buffers[0], gradient, illumination);
  else
    split<float>(buffers[0], gradient, illumination);
  const int nbuffers = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
  double misfit = 0;
  for (int k = 2; k < nbuffers; ++k) misfit += *vector_ptr<const double>(buffers[k]);  // shot order
  double* model = vector_ptr<double>(buffers[1]);
  std::vector<double> v(model, model + STARPU_VECTOR_GET_NX(buffers[1]));
  (*fn)(gradient, illumination, misfit, v);
  std::copy(v.begin(), v.end(), model);
}

struct starpu_codelet* step_codelet() {
  static struct starpu_perfmodel model = codelets::history_model("starwave_step");
  static struct starpu_codelet cl = [] {
    struct starpu_codelet c;
    starpu_codelet_init(&c);
    c.cpu_funcs[0] = step_cpu;
    c.cpu_funcs_name[0] = "step_cpu";
    c.nbuffers = STARPU_VARIABLE_NBUFFERS;
    c.model = &model;
    c.name = "step";
    return c;
  }();
  return &cl;
}

}  // namespace

void insert_step(starpu_data_handle_t contribution, const std::vector<graph::Data>& misfits, starpu_data_handle_t model,
                 const StepFunction* fn) {
  std::vector<starpu_data_descr> buffers{{contribution, STARPU_R}, {model, STARPU_RW}};
  for (const graph::Data& h : misfits) buffers.push_back({h, STARPU_R});
  submit_task(step_codelet(), "step", STARPU_DATA_MODE_ARRAY, buffers.data(), int(buffers.size()), STARPU_VALUE, &fn,
              sizeof fn);
}

}  // namespace starwave
