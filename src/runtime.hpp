// src/runtime.hpp — StarPU's lifetime. One Runtime per process; the scheduler defaults to
// dmda (history-based perf models, DESIGN §3) unless STARPU_SCHED says otherwise.
#pragma once

#include <string>

namespace starwave {

struct RuntimeOptions {
  int ncpus = -1;         // CPU workers; -1 = StarPU's choice (STARPU_NCPU or every core)
  int ncuda = -1;         // CUDA workers; -1 = every GPU
  std::string scheduler;  // empty = $STARPU_SCHED or dmda
};

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& o = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int cpu_workers() const;
  int cuda_workers() const;
  int workers() const;
  std::string scheduler() const;
};

}  // namespace starwave
