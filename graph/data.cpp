#include "graph/data.hpp"

#ifdef STARWAVE_USE_MPI
#include <mpi.h>
#include <starpu_mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "graph/resting.hpp"

namespace starwave::graph {
namespace {

int g_local_scopes = 0;  // LocalScopes alive (the submitting thread's)

void mpi_register([[maybe_unused]] starpu_data_handle_t h, [[maybe_unused]] int owner) {
#ifdef STARWAVE_USE_MPI
  static std::int64_t next_tag = 1;  // advanced identically on every rank
  if (size() > 1) starpu_mpi_data_register(h, next_tag++, owner);
#endif
}

/// StarPU 1.3 counts a vector's elements in 32 bits: a longer one is refused here, never
/// truncated (a run's memory estimate refuses such sizes first, with its own words).
uint32_t element_count(std::size_t n, std::size_t elem) {
  if (n > std::size_t(UINT32_MAX))
    throw Refused("StarPU: a buffer of " + std::to_string(n) + " elements of " + std::to_string(elem) +
                  " bytes is more than a StarPU 1.3 vector holds (2^32 - 1 elements)");
  return uint32_t(n);
}

}  // namespace

int rank() { return g_local_scopes > 0 ? 0 : world_rank(); }
int size() { return g_local_scopes > 0 ? 1 : world_size(); }

std::vector<int> interleaved_shots(int nshots) {
  std::vector<std::vector<int>> blocks(static_cast<std::size_t>(size()));
  for (int shot = 0; shot < nshots; ++shot) blocks[std::size_t(owner(shot, nshots))].push_back(shot);
  std::vector<int> order;
  order.reserve(std::size_t(std::max(0, nshots)));
  for (std::size_t k = 0; order.size() < std::size_t(std::max(0, nshots)); ++k)
    for (const std::vector<int>& b : blocks)
      if (k < b.size()) order.push_back(b[k]);
  return order;
}

std::vector<std::vector<int>> interleaved_batches(int nshots, int batch) {
  batch = std::max(1, batch);
  std::vector<std::vector<std::vector<int>>> blocks(static_cast<std::size_t>(size()));
  for (int shot = 0; shot < nshots; ++shot) {
    std::vector<std::vector<int>>& b = blocks[std::size_t(owner(shot, nshots))];
    if (b.empty() || int(b.back().size()) == batch) b.emplace_back();
    b.back().push_back(shot);
  }
  std::vector<std::vector<int>> order;
  std::size_t most = 0;
  for (const auto& b : blocks) most = std::max(most, b.size());
  for (std::size_t k = 0; k < most; ++k)
    for (const auto& b : blocks)
      if (k < b.size()) order.push_back(b[k]);
  return order;
}

LocalScope::LocalScope() { ++g_local_scopes; }
LocalScope::~LocalScope() { --g_local_scopes; }

Data& Data::operator=(Data&& o) noexcept {
  if (this != &o) {
    release();
    handle_ = o.handle_;
    callers_memory_ = o.callers_memory_;
    o.handle_ = nullptr;
  }
  return *this;
}

void Data::release() noexcept {
  if (!handle_) return;
  if (callers_memory_) {
    wake();  // it waits for the handle's tasks
    starpu_data_unregister(handle_);
  } else {
    starpu_data_unregister_submit(handle_);
  }
  handle_ = nullptr;
}

void Data::close() {
  if (!handle_) return;
  wake();
  starpu_data_unregister(handle_);
  handle_ = nullptr;
}

namespace {

/// A handle StarPU allocates of `bytes`: one larger than kLargestDiskPiece never goes to disk.
void keep_large_in_memory(starpu_data_handle_t h, std::size_t bytes) {
  if (std::uint64_t(bytes) > kLargestDiskPiece) starpu_data_set_ooc_flag(h, 0);
}

}  // namespace

Data owned_vector(int owner, const void* host, std::size_t n, std::size_t elem) {
  const uint32_t count = element_count(n, elem);
  starpu_data_handle_t h;
  const bool callers = owner == rank() && host;
  if (callers)
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, uintptr_t(host), count, elem);
  else
    starpu_vector_data_register(&h, -1, 0, count, elem);
  if (!callers) keep_large_in_memory(h, n * elem);
  mpi_register(h, owner);
  return Data(h, callers);
}

namespace {

/// Fills a handle StarPU allocates with `n` elements from `host`, in main memory.
void fill_from(starpu_data_handle_t h, const void* host, std::size_t n, std::size_t elem) {
  wake();
  if (starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_W) != 0)
    throw Refused("StarPU: cannot allocate an input buffer of " + std::to_string(n * elem) + " bytes");
  std::memcpy(starpu_data_get_local_ptr(h), host, n * elem);
  starpu_data_release_on_node(h, STARPU_MAIN_RAM);
}

}  // namespace

Data shot_buffer(int owner, std::size_t n, std::size_t elem) {
  const std::size_t group = std::max<std::size_t>((n + UINT32_MAX - 1) / UINT32_MAX, 1);  // elements a group
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count((n + group - 1) / group, elem * group), elem * group);
  keep_large_in_memory(h, n * elem);
  mpi_register(h, owner);
  return Data(h, false);
}

Data input_vector(int owner, const void* host, std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  keep_large_in_memory(h, n * elem);
  mpi_register(h, owner);
  Data d(h, false);  // handed back if the copy below fails
  if (owner == rank() && host) fill_from(h, host, n, elem);
  return d;
}

Data per_rank_vector(const void* host, std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  keep_large_in_memory(h, n * elem);
#ifdef STARWAVE_USE_MPI
  mpi_register(h, STARPU_MPI_PER_NODE);
#endif
  Data d(h, false);
  fill_from(h, host, n, elem);
  return d;
}

Data scratch_vector(std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  keep_large_in_memory(h, n * elem);
  return Data(h, false);
}

void send_to([[maybe_unused]] const Data& d, [[maybe_unused]] int node) {
#ifdef STARWAVE_USE_MPI
  if (size() > 1) {
    wake();
    starpu_mpi_get_data_on_node_detached(MPI_COMM_WORLD, d, node, nullptr, nullptr);
  }
#endif
}

Reading::Reading(const Data& d) : handle_(d), values_(nullptr) {
  wake();
  if (!handle_ || starpu_data_acquire(handle_, STARPU_R) != 0) throw Refused("StarPU: cannot read a result");
  values_ = starpu_data_get_local_ptr(handle_);
}

Reading::~Reading() { starpu_data_release(handle_); }

namespace {
std::atomic<bool> g_shots_on_cpu{true}, g_shots_on_cuda{true};
}  // namespace

void take_shots_on(bool cpu, bool cuda) {
  if (!cpu && !cuda) throw std::logic_error("graph::take_shots_on: no worker would take the shots");
  g_shots_on_cpu.store(cpu);
  g_shots_on_cuda.store(cuda);
}

bool takes_shots(bool cpu_worker) { return (cpu_worker ? g_shots_on_cpu : g_shots_on_cuda).load(); }

int workers() { return int(starpu_worker_get_count()); }
int cuda_workers() { return int(starpu_cuda_worker_get_count()); }

}  // namespace starwave::graph
