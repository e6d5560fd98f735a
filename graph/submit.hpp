// graph/submit.hpp — the one way every task is submitted. Each codelet's insert_<op>()
// calls submit_task(). Under several MPI ranks it is starpu_mpi_task_insert on the world
// communicator: every rank submits the same graph, the task runs where the data it
// writes lives and StarPU-MPI moves what it reads (graph/data.hpp), so the
// workflows are the same for one process or many.
#pragma once

#include <starpu.h>

#ifdef STARWAVE_USE_MPI
#include <mpi.h>
#include <starpu_mpi.h>
#endif

#include <string>
#include <vector>

#include "graph/data.hpp"
#include "graph/resting.hpp"

namespace starwave {

template <typename... Args>
void submit_task(struct starpu_codelet* cl, const char* name, Args... args) {
  graph::wake();
  int ret;
#ifdef STARWAVE_USE_MPI
  if (graph::distributed())
    ret = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, args..., STARPU_NAME, name, 0);
  else
#endif
    ret = starpu_task_insert(cl, args..., STARPU_NAME, name, 0);
  if (ret != 0)
    throw graph::Refused(std::string("StarPU refused task '") + name + "' (error " + std::to_string(ret) + ")");
}

/// submit_task() on the codelet's buffers `data`, in its order: each buffer's access mode
/// is the one the codelet's definition gives (cl->modes), written there once.
template <typename... Args>
void submit_on(struct starpu_codelet* cl, const char* name, std::vector<starpu_data_handle_t> handles, Args... args) {
  if (int(handles.size()) != cl->nbuffers)
    throw graph::Refused(std::string("task '") + name + "': " + std::to_string(handles.size()) +
                         " buffers for a codelet of " + std::to_string(cl->nbuffers));
  submit_task(cl, name, STARPU_DATA_ARRAY, handles.data(), int(handles.size()), args...);
}

}  // namespace starwave
