// src/runtime/scratch.cpp — see scratch.hpp.
#include "src/runtime/scratch.hpp"

// starpu_disk.h declares C functions without extern "C" (StarPU 1.3): included first, wrapped.
extern "C" {
#include <starpu_disk.h>
}
#include <starpu.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>

#include "src/base/error.hpp"
#include "src/safety/signals.hpp"

namespace starwave::scratch {
namespace {

namespace fs = std::filesystem;

const char* const kPrefix = "starwave-scratch.";

/// "starwave-scratch.HOST.": a folder's name before its process id. The host, as a shared
/// file system may hold the folders of runs on several machines (whose process ids say
/// nothing here).
std::string own_prefix() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "host");
  for (char* c = host; *c; ++c)
    if (*c == '/') *c = '_';
  return kPrefix + std::string(host) + ".";
}

std::mutex g_mutex;
std::string g_option;      // what gave DIR, as a message names it: "--scratch " or "STARPU_DISK_SWAP="
std::uint64_t g_most = 0;  // STARPU_DISK_SWAP_SIZE, in bytes (0: no cap)
std::string g_dir;         // --scratch DIR
std::string g_folder;      // DIR/starwave-scratch.HOST.PID while the disk node runs
std::uint64_t g_room = 0;

/// The folders runs on this machine that are gone left in `dir` (starwave-scratch.HOST.PID,
/// no such process).
void remove_stale(const std::string& dir) {
  std::error_code ec;
  const std::string prefix = own_prefix();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.is_symlink(ec) || !e.is_directory(ec)) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (safety::process_gone(std::stol(digits))) safety::remove_folder(e.path().string());
  }
}

}  // namespace

void set_folder(const std::string& dir) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_dir.clear();
  g_most = 0;
  g_option = "--scratch ";
  std::string folder = dir;
  if (folder.empty()) {  // StarPU's own setting for a disk to swap to, if the run gives none
    const char* swap = std::getenv("STARPU_DISK_SWAP");
    if (!swap || !*swap) return;
    folder = swap;
    g_option = "STARPU_DISK_SWAP=";
    const char* backend = std::getenv("STARPU_DISK_SWAP_BACKEND");
    if (backend && *backend && std::string(backend) != "unistd")
      throw InputError("STARPU_DISK_SWAP_BACKEND=" + std::string(backend) +
                       ": starwave's out of core uses StarPU's unistd backend; unset it or set it to unistd");
    if (const char* size = std::getenv("STARPU_DISK_SWAP_SIZE"); size && *size) {
      const std::string text = size;
      if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos || std::stoul(text) == 0)
        throw InputError("STARPU_DISK_SWAP_SIZE=" + text + ": must be a whole number of MiB, 1 or more");
      g_most = std::uint64_t(std::stoul(text)) << 20;
    }
  }
  const std::string name = g_option + folder;
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  if (!fs::exists(st)) {
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw InputError(name + ": cannot look at it (" + ec.message() + ")");
    throw InputError(name + ": no such folder");
  }
  if (!fs::is_directory(st)) throw InputError(name + ": not a folder");
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(name + ": this process may not write there (" + os_cause(errno) + ")");
  g_dir = folder;
}

bool wanted() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return !g_dir.empty();
}

void start() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_dir.empty() || !g_folder.empty()) return;
  remove_stale(g_dir);
  const std::string folder = (fs::path(g_dir) / (own_prefix() + std::to_string(getpid()))).string();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(folder, ec))) safety::remove_folder(folder);  // ours from an earlier Runtime
  if (mkdir(folder.c_str(), 0700) != 0)
    throw RuntimeError("--scratch " + g_dir + ": cannot make the folder " + folder + ": " + os_cause(errno));
  safety::track(folder, true);
  struct statvfs fsys {};
  if (statvfs(folder.c_str(), &fsys) != 0) {
    const int err = errno;
    safety::untrack(folder);
    safety::remove_folder(folder);
    throw RuntimeError(g_option + g_dir + ": cannot tell its free space: " + os_cause(err));
  }
  const std::uint64_t free = std::uint64_t(fsys.f_bavail) * std::uint64_t(fsys.f_frsize);
  const std::uint64_t room = g_most > 0 ? std::min(g_most, free - free / 10) : free - free / 10;
  if (room < STARPU_DISK_SIZE_MIN) {
    safety::untrack(folder);
    safety::remove_folder(folder);
    throw RuntimeError(g_option + g_dir + ": " + bytes_text(double(free)) + " free there" +
                       (g_most > 0 ? " (STARPU_DISK_SWAP_SIZE " + bytes_text(double(g_most)) + ")" : "") +
                       "; StarPU's disk node needs 16 MiB at least, and the run leaves a tenth free");
  }
  // StarPU keeps the path it is given: a string that lives as long as the process.
  static std::string registered;
  registered = folder;
  if (starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(registered.c_str()), starpu_ssize_t(room)) < 0) {
    safety::untrack(folder);
    safety::remove_folder(folder);
    throw RuntimeError(g_option + g_dir + ": StarPU could not start a disk node there");
  }
  g_folder = folder;
  g_room = room;
}

void stop() noexcept {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_folder.empty()) return;
  safety::untrack(g_folder);
  safety::remove_folder(g_folder);
  g_folder.clear();
  g_room = 0;
}

std::string given() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_dir.empty() ? std::string() : g_option + g_dir;
}

bool active() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return !g_folder.empty();
}

std::uint64_t room() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_room;
}

std::string room_text() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return bytes_text(double(g_room)) + (g_most > 0 && g_room == g_most
                                           ? " STARPU_DISK_SWAP_SIZE allows"
                                           : " StarPU may use there (nine tenths of its free space)");
}

std::uint64_t cpu_limit_mib(std::uint64_t available) {
  // An eighth and 16 MiB left for what the run holds outside StarPU (inputs read as it
  // goes, the results as they are written).
  const std::uint64_t mib = available >> 20, keep = mib / 8 + 16;
  return mib > keep + 16 ? mib - keep : 16;
}

}  // namespace starwave::scratch
