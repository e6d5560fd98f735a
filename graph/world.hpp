// graph/world.hpp — this process's place among the MPI ranks: recorded once when MPI starts
// (mpi::start_if_launched(); src/runtime/mpi.hpp's mpi::rank() and size() read it here), read
// by the graph layer (graph/data.hpp) and by the workers' rest (graph/resting.hpp).
#pragma once

namespace starwave::graph {

void set_world(int rank, int size);
int world_rank();  // 0 … world_size() − 1 (0 without MPI)
int world_size();  // 1 without MPI

}  // namespace starwave::graph
