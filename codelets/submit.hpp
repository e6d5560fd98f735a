// codelets/submit.hpp — the one way every task is submitted. Each codelet's insert_<op>()
// calls submit_task(); when starpu-mpi is added (issue 5) this becomes
// starpu_mpi_task_insert on the world communicator, so the same graph runs on one process
// or many without the workflows changing.
#pragma once

#include <starpu.h>

#include <string>

#include "src/error.hpp"

namespace starwave {

template <typename... Args>
void submit_task(struct starpu_codelet* cl, const char* name, Args... args) {
  const int ret = starpu_task_insert(cl, args..., STARPU_NAME, name, 0);
  if (ret != 0)
    throw RuntimeError(std::string("StarPU refused task '") + name + "' (error " + std::to_string(ret) + ")");
}

}  // namespace starwave
