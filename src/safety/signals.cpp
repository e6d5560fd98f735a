// src/safety/signals.cpp — see signals.hpp.
#include "src/safety/signals.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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
std::atomic<bool> g_emptied[kSlots];  // a folder whose files are removed whatever their names (scratch)

/// Removes everything inside the folder open as `fd` (files, and folders down to `depth`
/// levels, emptied first) with raw system calls: async-signal-safe. Closes `fd`.
void empty_folder_at(int fd, int depth) noexcept {
  alignas(8) char buf[2048];
  // Passes over the folder until one removes nothing (removing entries while reading the
  // folder may skip some).
  for (int pass = 0; pass < 64; ++pass) {
    int removed = 0;
    for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
      for (long at = 0; at < n;) {
        unsigned short reclen;  // linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
        std::memcpy(&reclen, buf + at + 16, sizeof reclen);
        const unsigned char type = static_cast<unsigned char>(buf[at + 18]);
        const char* name = buf + at + 19;
        at += reclen;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        // A folder (or an entry whose type the file system does not say: tried as one).
        const int sub = (type == DT_DIR || type == DT_UNKNOWN) && depth > 0
                            ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                            : -1;
        if (sub >= 0) {
          empty_folder_at(sub, depth - 1);
          removed += unlinkat(fd, name, AT_REMOVEDIR) == 0;
        } else {
          removed += unlinkat(fd, name, 0) == 0;
        }
      }
    if (removed == 0 || lseek(fd, 0, SEEK_SET) != 0) break;
  }
  close(fd);
}

void empty_folder(const char* path) noexcept {
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) empty_folder_at(fd, 8);
}
/// Descriptors held in reserve from the start: a run that has used up its open-files limit
/// (ulimit -n) must still open the folders it removes when it ends. Closed first by
/// remove_tracked(), which only runs as the process ends.
constexpr int kSpareDescriptors = 8;
int g_spare[kSpareDescriptors] = {-1, -1, -1, -1, -1, -1, -1, -1};

std::atomic<int> g_child{0};  // a child's process group, killed with the run

std::atomic<bool> g_graceful{false};
std::atomic<int> g_signal{0};
std::atomic<bool> g_interrupt{false};

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
  for (int& fd : g_spare)
    if (fd < 0) fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void arm_graceful_stop(bool armed) { g_graceful.store(armed); }
bool stop_requested() { return g_signal.load() != 0; }
int stop_signal() { return g_signal.load(); }

void request_interrupt() { g_interrupt.store(true); }
void clear_interrupt() { g_interrupt.store(false); }
bool interrupt_requested() { return g_interrupt.load(); }

void track(const std::string& path) { track(path, false); }

void track(const std::string& path, bool empty_first) {
  if (path.size() >= kPathBytes) return;  // cannot be removed by a signal: destructors still do
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_emptied[i].store(empty_first);
    g_slot_state[i].store(2);
    return;
  }
}

bool process_gone(long pid) { return pid > 0 && pid != long(getpid()) && kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

void remove_folder(const std::string& path) noexcept {
  empty_folder(path.c_str());
  rmdir(path.c_str());
}

void untrack(const std::string& path) {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == 2 && path == g_paths[i]) {
      g_slot_state[i].store(0);
      return;
    }
}

void track_child(int process_group) { g_child.store(process_group); }
void untrack_child(int process_group) {
  int expected = process_group;
  g_child.compare_exchange_strong(expected, 0);
}

void remove_tracked() noexcept {
  if (const int group = g_child.exchange(0); group > 0) kill(-group, SIGKILL);
  for (int& fd : g_spare)  // room for the folders' descriptors below, whatever the run holds
    if (fd >= 0) close(fd), fd = -1;
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == 2) unlink(g_paths[i]);
  for (int i = 0; i < kSlots; ++i)  // then the folders, emptied of what was ours
    if (g_slot_state[i].load() == 2) {
      if (g_emptied[i].load()) empty_folder(g_paths[i]);
      rmdir(g_paths[i]);
    }
}

}  // namespace starwave::safety
