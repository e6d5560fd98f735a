#include "codelets/failure.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace starwave::codelets {
namespace {

std::mutex g_mutex;
std::string g_message;
std::atomic<bool> g_failed{false};
std::atomic<int> g_busy{0};
std::atomic<long long> g_last_end_ns{0};

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

Busy::Busy() { ++g_busy; }
Busy::~Busy() {
  g_last_end_ns.store(now_ns());
  --g_busy;
}

bool idle_for(double seconds) { return g_busy.load() == 0 && double(now_ns() - g_last_end_ns.load()) >= seconds * 1e9; }

std::string take_failure() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::string m;
  m.swap(g_message);
  g_failed.store(false);
  return m;
}

}  // namespace starwave::codelets
