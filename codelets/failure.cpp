#include "codelets/failure.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace starwave::codelets {
namespace {

std::mutex g_mutex;
std::string g_message;
std::atomic<bool> g_failed{false};

}  // namespace

void record_failure(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_failed.load()) return;
  g_message = message;
  g_failed.store(true);
}

bool must_skip(const char* task) {
  if (g_failed.load(std::memory_order_relaxed)) return true;
  const char* injected = std::getenv("STARWAVE_TEST_FAIL_TASK");
  if (injected && !std::strcmp(injected, task)) {
    record_failure(std::string(task) + " task: injected failure (STARWAVE_TEST_FAIL_TASK)");
    return true;
  }
  return false;
}

bool device_fault_requested(const char* task) {
  const char* injected = std::getenv("STARWAVE_TEST_FAIL_TASK");
  return injected && std::string(injected) == std::string(task) + "-on-device";
}

bool failed() { return g_failed.load(); }

std::string take_failure() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string m;
  m.swap(g_message);
  g_failed.store(false);
  return m;
}

}  // namespace starwave::codelets
