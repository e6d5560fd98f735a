#include "codelets/distribution.hpp"

#ifdef STARWAVE_USE_MPI
#include <mpi.h>
#include <starpu_mpi.h>
#endif

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace starwave::graph {
namespace {

int g_rank = 0, g_size = 1;

void mpi_register([[maybe_unused]] starpu_data_handle_t h, [[maybe_unused]] int owner) {
#ifdef STARWAVE_USE_MPI
  static std::int64_t next_tag = 1;  // advanced identically on every rank
  if (g_size > 1) starpu_mpi_data_register(h, next_tag++, owner);
#endif
}

/// StarPU 1.3 counts a vector's elements in 32 bits: a longer one is refused here, never
/// truncated (a run's memory estimate refuses such sizes first, with its own words).
uint32_t element_count(std::size_t n, std::size_t elem) {
  if (n > std::size_t(UINT32_MAX))
    throw std::length_error("StarPU: a buffer of " + std::to_string(n) + " elements of " + std::to_string(elem) +
                            " bytes is more than a StarPU 1.3 vector holds (2^32 - 1 elements)");
  return uint32_t(n);
}

}  // namespace

void set_world(int rank, int size) {
  g_rank = rank;
  g_size = size;
}
int rank() { return g_rank; }
int size() { return g_size; }

LocalScope::LocalScope() : rank_(g_rank), size_(g_size) { g_rank = 0, g_size = 1; }
LocalScope::~LocalScope() { g_rank = rank_, g_size = size_; }

starpu_data_handle_t owned_vector(int owner, const void* host, std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  if (owner == g_rank && host)
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, uintptr_t(host), element_count(n, elem), elem);
  else
    starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  mpi_register(h, owner);
  return h;
}

/// Fills a handle StarPU allocates with `n` elements from `host`, in main memory.
void fill_from(starpu_data_handle_t h, const void* host, std::size_t n, std::size_t elem) {
  if (starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_W) != 0)
    throw std::runtime_error("StarPU: cannot allocate an input buffer of " + std::to_string(n * elem) + " bytes");
  std::memcpy(starpu_data_get_local_ptr(h), host, n * elem);
  starpu_data_release_on_node(h, STARPU_MAIN_RAM);
}

starpu_data_handle_t input_vector(int owner, const void* host, std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  mpi_register(h, owner);
  if (owner == g_rank && host) fill_from(h, host, n, elem);
  return h;
}

starpu_data_handle_t per_rank_vector(const void* host, std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
#ifdef STARWAVE_USE_MPI
  mpi_register(h, STARPU_MPI_PER_NODE);
#endif
  fill_from(h, host, n, elem);
  return h;
}

starpu_data_handle_t scratch_vector(std::size_t n, std::size_t elem) {
  starpu_data_handle_t h;
  starpu_vector_data_register(&h, -1, 0, element_count(n, elem), elem);
  return h;
}

void send_to([[maybe_unused]] starpu_data_handle_t h, [[maybe_unused]] int node) {
#ifdef STARWAVE_USE_MPI
  if (g_size > 1) starpu_mpi_get_data_on_node_detached(MPI_COMM_WORLD, h, node, nullptr, nullptr);
#endif
}

}  // namespace starwave::graph
