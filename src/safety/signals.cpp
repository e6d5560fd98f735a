// src/safety/signals.cpp — see signals.hpp.
#include "src/safety/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace starwave::safety {
namespace {

// The tracked paths live in fixed storage so that a signal handler can walk them without
// allocating: a slot is claimed (1), filled, then published (2); removal reads only
// published slots.
constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;
char g_paths[kSlots][kPathBytes];
std::atomic<int> g_slot_state[kSlots];
std::atomic<bool> g_graceful{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  if (g_graceful.load() && g_signal.load() == 0) {  // fwi: finish the evaluation, save, stop
    g_signal.store(sig);
    return;
  }
  remove_tracked();
  std::signal(sig, SIG_DFL);  // then the signal ends the process as the sender meant
  std::raise(sig);
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe is a failed write, reported as one
  std::signal(SIGXFSZ, SIG_IGN);  // a file-size limit likewise (EFBIG)
}

void arm_graceful_stop(bool armed) { g_graceful.store(armed); }
bool stop_requested() { return g_signal.load() != 0; }
int stop_signal() { return g_signal.load(); }

void track(const std::string& path) {
  if (path.size() >= kPathBytes) return;  // cannot be removed by a signal: destructors still do
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_slot_state[i].store(2);
    return;
  }
}

void untrack(const std::string& path) {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == 2 && path == g_paths[i]) {
      g_slot_state[i].store(0);
      return;
    }
}

void remove_tracked() noexcept {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == 2) unlink(g_paths[i]);
  for (int i = 0; i < kSlots; ++i)  // then the folders, emptied of what was ours
    if (g_slot_state[i].load() == 2) rmdir(g_paths[i]);
}

}  // namespace starwave::safety
