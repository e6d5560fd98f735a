// graph/resting.cpp — see rest.hpp.
#include "graph/resting.hpp"

#include <starpu.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "graph/world.hpp"

// StarPU's own test that no data request is queued or in flight on a memory node: exported by
// StarPU 1.3's library, though not declared in its headers (absent elsewhere: weak).
extern "C" __attribute__((weak)) int _starpu_check_that_no_data_request_exists(unsigned node);

namespace starwave::graph {
namespace {

// starpu_pause() counts without a lock: every pause and resume goes through this one.
std::mutex g_mutex;
bool g_running = false;  // StarPU is up
bool g_resting = false;  // and paused by rest()

/// Waits until no memory node has a data request queued or in flight, three looks in a row
/// 1 ms apart (a request's completion callback runs just after it leaves the lists), 10 s at
/// most. A task graph's end leaves requests behind — a prefetch, the lazy unregistering of a
/// shot's buffers, a store's interval on its way to disk — and StarPU 1.3.10 paused or shut
/// down with requests on a disk node crashed (a segfault in _starpu_request_mem_chunk_removal,
/// an assertion on its request lists: 3 runs in 120 out of core under load).
void drain_data_requests() {
#ifndef STARWAVE_SIMGRID  // a simulation has no disk node, and a real sleep would stop it
  if (!&_starpu_check_that_no_data_request_exists) return;
  const unsigned nodes = starpu_memory_nodes_get_count();
  for (int quiet = 0, looks = 0; quiet < 3 && looks < 10000; ++looks) {
    bool idle = true;
    for (unsigned n = 0; n < nodes && idle; ++n) idle = _starpu_check_that_no_data_request_exists(n) != 0;
    quiet = idle ? quiet + 1 : 0;
    if (quiet < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
#endif
}

}  // namespace

void wake() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_running || !g_resting) return;
  starpu_resume();
  g_resting = false;
}

void rest() {
  // Under several ranks a rank's graph may still owe others a reduction or a send after its
  // own waits are over: its workers run on (the ranks wait in MPI's own polling anyway).
  if (world_size() > 1) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_running || g_resting) return;
  }
  starpu_task_wait_for_all();  // nothing left queued: a paused worker would hold it back
  drain_data_requests();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_running || g_resting) return;
  starpu_pause();
  g_resting = true;
}

void started() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_running = true;
    g_resting = false;
  }
  rest();
}

void stopping() {
  wake();
  drain_data_requests();  // under several ranks the workers never rested
  std::lock_guard<std::mutex> lock(g_mutex);
  g_running = false;
}

}  // namespace starwave::graph
