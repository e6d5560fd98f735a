// src/runtime/mpi.cpp — see mpi.hpp.
#include "src/runtime/mpi.hpp"

#ifdef STARWAVE_USE_MPI
#include <hwloc.h>
#include <mpi.h>
#endif
#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "graph/data.hpp"
#include "src/base/error.hpp"
#include "src/safety/signals.hpp"

namespace starwave::mpi {

#ifdef STARWAVE_USE_MPI
namespace {
bool env_set(const char* name) { return std::getenv(name) != nullptr; }
}  // namespace

/// MPI once per process, MPI_THREAD_MULTIPLE (StarPU-MPI's progression thread and the
/// host's own collectives call MPI concurrently), finalised at exit after every Runtime
/// has shut StarPU down.
void ensure_started() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return;
  // StarPU-MPI's progression thread polls MPI while any transfer is pending (for the
  // reduction tree, most of a gradient): where it shares a core with a worker, Open MPI
  // must yield that core while it waits. Measured on 2 ranks × 1 worker on 2 cores: the
  // gradient took 1.36× one rank × 2 workers without it, 1.02× with it (docs/benchmarks.md
  // "MPI"). A value the user set stays.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw RuntimeError("MPI: MPI_Init_thread failed");
  if (provided < MPI_THREAD_MULTIPLE)
    throw RuntimeError(
        "MPI: this MPI library does not support MPI_THREAD_MULTIPLE (StarPU-MPI's thread and "
        "starwave's collectives both call MPI)");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  graph::set_world(rank, size);  // the one record of this process's place (graph::world_rank())
  std::atexit([] {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  });
}

/// Ranks sharing a node split its cores and GPUs (see runtime.hpp): an equal run of cores
/// each, one left to StarPU-MPI's progression thread and one per GPU worker's driver
/// thread when the run is long enough.
void split_node(struct starpu_conf& conf, int node_rank, int node_size, int per_gpu) {
  if (node_size < 2) return;
  int ngpus = 0;
#ifdef STARWAVE_USE_CUDA
  if (cudaGetDeviceCount(&ngpus) != cudaSuccess) ngpus = 0;
#endif
  int my_gpus = 0;
  if (!env_set("STARPU_NCUDA") && !env_set("STARPU_WORKERS_CUDAID") && !env_set("CUDA_VISIBLE_DEVICES") &&
      conf.ncuda < 0) {
    conf.use_explicit_workers_cuda_gpuid = 1;
    for (int g = node_rank; g < ngpus; g += node_size) conf.workers_cuda_gpuid[my_gpus++] = unsigned(g);
    conf.ncuda = my_gpus;
  } else if (conf.ncuda > 0) {
    my_gpus = conf.ncuda;
  }
  if (env_set("STARPU_WORKERS_CPUID") || env_set("STARPU_WORKERS_GETBIND")) return;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores > 0) {
    const int per_rank = std::max(1, ncores / node_size), first = (node_rank * per_rank) % ncores;
    std::vector<unsigned> pus;  // the first PU of each of this rank's cores (StarPU's bind ids)
    for (int c = first; c < first + per_rank && c < ncores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, unsigned(c));
      hwloc_obj_t pu = core ? hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0) : nullptr;
      if (pu) pus.push_back(pu->logical_index);
    }
    if (!pus.empty()) {
      conf.use_explicit_workers_bindid = 1;
      for (int i = 0; i < STARPU_NMAXWORKERS; ++i) conf.workers_bindid[i] = pus[std::size_t(i) % pus.size()];
      if (conf.ncpus < 0) conf.ncpus = std::max(1, int(pus.size()) - 1 - my_gpus * per_gpu);
    }
  }
  hwloc_topology_destroy(topo);
}
#endif

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    const char* v = std::getenv(name);
    if (v && std::atoi(v) > 0) return std::atoi(v);
  }
  // srun (a job step, not the batch script around it)
  if (std::getenv("SLURM_PROCID") && std::getenv("SLURM_STEP_NUM_TASKS"))
    return std::max(1, std::atoi(std::getenv("SLURM_STEP_NUM_TASKS")));
  return 1;
}

void start_if_launched() {
  const int ranks = launched_ranks();
#ifdef STARWAVE_USE_MPI
  if (ranks > 1) ensure_started();
#else
  // Without starpu-mpi every rank would do the whole job and write the same files.
  if (ranks > 1)
    throw InputError("this starwave was built without MPI (STARWAVE_USE_MPI=OFF) but launched as " +
                     std::to_string(ranks) + " ranks; start one process, or rebuild with MPI");
#endif
}

int rank() { return graph::world_rank(); }
int size() { return graph::world_size(); }

#ifdef STARWAVE_USE_MPI
constexpr std::size_t kMpiChunk = std::size_t(1) << 30;
#endif

void broadcast([[maybe_unused]] std::vector<double>& v) {
#ifdef STARWAVE_USE_MPI
  if (size() < 2) return;
  unsigned long long n = v.size();
  if (MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    throw RuntimeError("MPI: MPI_Bcast failed");
  v.resize(n);
  for (std::size_t at = 0; at < n; at += kMpiChunk)  // MPI counts in int: pieces of at most 2^30
    if (MPI_Bcast(v.data() + at, int(std::min<std::size_t>(kMpiChunk, n - at)), MPI_DOUBLE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
      throw RuntimeError("MPI: MPI_Bcast failed");
#endif
}

void sum_to_root([[maybe_unused]] std::vector<double>& v) {
#ifdef STARWAVE_USE_MPI
  if (size() < 2 || v.empty()) return;
  for (std::size_t at = 0; at < v.size(); at += kMpiChunk) {  // MPI counts in int: pieces of at most 2^30
    const int n = int(std::min<std::size_t>(kMpiChunk, v.size() - at));
    const int ret = rank() == 0 ? MPI_Reduce(MPI_IN_PLACE, v.data() + at, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)
                                : MPI_Reduce(v.data() + at, nullptr, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (ret != MPI_SUCCESS) throw RuntimeError("MPI: MPI_Reduce failed");
  }
#endif
}

int from_rank0(int value) {
  std::vector<double> v{double(value)};
  broadcast(v);
  return int(v[0]);
}

int least_over_ranks(int value) {
  if (size() < 2) return value;
  std::vector<double> each(std::size_t(size()), 0.0);
  each[std::size_t(rank())] = double(value);
  sum_to_root(each);
  return from_rank0(int(*std::min_element(each.begin(), each.end())));
}

std::string prefix() {
  return size() > 1 ? "[rank " + std::to_string(rank()) + "/" + std::to_string(size()) + "] " : "";
}

void abort_all(int code) {
  safety::remove_tracked();  // no temporary or lock outlives the run, even one cut short
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef STARWAVE_USE_MPI
  int ready = 0, done = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (ready && !done && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}
}  // namespace starwave::mpi
