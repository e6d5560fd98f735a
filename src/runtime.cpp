#include "src/runtime.hpp"

#include <starpu.h>

#include <cstdlib>

#include "src/error.hpp"

namespace starwave {

Runtime::Runtime(const RuntimeOptions& o) {
  struct starpu_conf conf;
  if (starpu_conf_init(&conf) != 0) throw RuntimeError("StarPU: starpu_conf_init failed");
  if (o.ncpus >= 0) conf.ncpus = o.ncpus;
  if (o.ncuda >= 0) conf.ncuda = o.ncuda;
  conf.nopencl = 0;
  if (!o.scheduler.empty())
    conf.sched_policy_name = o.scheduler.c_str();
  else if (std::getenv("STARPU_SCHED") == nullptr)
    conf.sched_policy_name = "dmda";
  // Buffers StarPU allocates (the wavefield scratch, copies on other nodes) start on
  // 64-byte boundaries like ours, so the kernels' rows are aligned (kernels/shot.hpp).
  starpu_malloc_set_align(64);
  const int ret = starpu_init(&conf);
  if (ret == -ENODEV) throw RuntimeError("StarPU: no worker available (check STARPU_NCPU / STARPU_NCUDA)");
  if (ret != 0) throw RuntimeError("StarPU: starpu_init failed (error " + std::to_string(ret) + ")");
}

Runtime::~Runtime() { starpu_shutdown(); }

int Runtime::cpu_workers() const { return int(starpu_cpu_worker_get_count()); }
int Runtime::cuda_workers() const { return int(starpu_cuda_worker_get_count()); }
int Runtime::workers() const { return int(starpu_worker_get_count()); }

std::string Runtime::scheduler() const {
  struct starpu_sched_policy* p = starpu_sched_ctx_get_sched_policy(0);
  return p && p->policy_name ? p->policy_name : "unknown";
}

}  // namespace starwave
