// graph/world.cpp — see world.hpp.
#include "graph/world.hpp"

namespace starwave::graph {
namespace {

int g_world_rank = 0, g_world_size = 1;

}  // namespace

void set_world(int rank, int size) {
  g_world_rank = rank;
  g_world_size = size;
}
int world_rank() { return g_world_rank; }
int world_size() { return g_world_size; }

}  // namespace starwave::graph
