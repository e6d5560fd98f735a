// codelets/rest.cpp — see rest.hpp.
#include "codelets/rest.hpp"

#include <starpu.h>

#include <mutex>

#include "codelets/world.hpp"

namespace starwave::graph {
namespace {

// starpu_pause() counts without a lock: every pause and resume goes through this one.
std::mutex g_mutex;
bool g_running = false;  // StarPU is up
bool g_resting = false;  // and paused by rest()

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
  std::lock_guard<std::mutex> lock(g_mutex);
  g_running = false;
}

}  // namespace starwave::graph
