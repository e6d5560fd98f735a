// src/runtime/scratch.cpp — see scratch.hpp.
#include "src/runtime/scratch.hpp"

// starpu_disk.h declares C functions without extern "C" (StarPU 1.3): included first, wrapped.
extern "C" {
#include <starpu_disk.h>
}
#include <fcntl.h>
#include <starpu.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/runtime/mpi.hpp"
#include "src/safety/signals.hpp"

// Set by the StarPU that scripts/setup builds (scripts/starpu/disk_errors.pl; absent from
// another StarPU: weak).
extern "C" __attribute__((weak)) void (*starpu_disk_fatal_error_hook)(const char* what, const char* path, int err);

namespace starwave::scratch {
namespace {

namespace fs = std::filesystem;

const char* const kPrefix = "starwave-scratch.";
/// The file inside a run's folder that the run holds locked (flock) while it lives: the
/// kernel releases the lock when the process ends however it ends, in any PID namespace, so
/// a folder whose lock can be taken is provably abandoned.
const char* const kOwnerFile = ".starwave-owner";
const std::string kSignature = "starwave scratch folder\n";
/// StarPU's unistd backend keeps this many of its files open (MAX_OPEN_FILES in
/// disk_unistd_global.c), and opens the others for each access.
constexpr long kStarpuOpenFiles = 64;

/// "starwave-scratch.HOST.": a folder's name before its process id. The host, as a shared
/// file system may hold the folders of runs on several machines (whose locks a network file
/// system may not carry).
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
std::string g_folder;      // DIR/starwave-scratch.HOST.PID.XXXXXX while the disk node runs
int g_owner_fd = -1;       // its owner file, locked
bool g_planning = false;   // plan: the room reckoned, nothing made or removed
bool g_started = false;
std::uint64_t g_room = 0;

/// Whether `name` is one of StarPU's in a scratch folder: its 3-digit folders, its
/// STARPU_XXXXXX files.
bool starpu_name(const std::string& name, bool folder) {
  if (folder)
    return name.size() == 3 &&
           std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return name.size() == 13 && name.rfind("STARPU_", 0) == 0;
}

/// Removes StarPU's files and folders under `dir` (`depth` levels of folders), nothing else.
void remove_starpu_files(const fs::path& dir, int depth) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string();
    if (e.is_symlink(ec)) continue;
    if (e.is_directory(ec)) {
      if (depth > 0 && starpu_name(name, true)) {
        remove_starpu_files(e.path(), depth - 1);
        rmdir(e.path().c_str());  // stays if anything else is in it
      }
    } else if (e.is_regular_file(ec) && starpu_name(name, false)) {
      unlink(e.path().c_str());
    }
  }
}

/// Removes the folders of runs of this machine that are gone from `dir`: a folder of ours
/// (its owner file signed) whose lock is free. A folder of a live run (its lock held, in
/// any PID namespace), one being made (not yet signed) and anything else — a user's own
/// folder under a name like ours — stay; of an abandoned folder only StarPU's files go.
void remove_abandoned(const std::string& dir) {
  std::error_code ec;
  const std::string prefix = own_prefix();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.is_symlink(ec) || !e.is_directory(ec)) continue;
    const std::string owner = (e.path() / kOwnerFile).string();
    const int fd = open(owner.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    char text[64] = {};
    const bool abandoned = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                           pread(fd, text, sizeof text - 1, 0) >= ssize_t(kSignature.size()) &&
                           std::string(text).rfind(kSignature, 0) == 0;
    if (abandoned) {  // removed while this process holds its lock: no other run judges it meanwhile
      remove_starpu_files(e.path(), 2);
      unlink(owner.c_str());
      rmdir(e.path().c_str());
    }
    close(fd);
  }
}

/// The bytes StarPU may use in `dir`: nine tenths of its free space, at most
/// STARPU_DISK_SWAP_SIZE; throws InputError naming the option when that is below what
/// StarPU's disk node needs (an unusable folder is bad input, exit 2, whenever it is found).
std::uint64_t room_in(const std::string& dir) {
  struct statvfs fsys {};
  if (statvfs(dir.c_str(), &fsys) != 0)
    throw InputError(g_option + g_dir + ": cannot tell its free space: " + os_cause(errno));
  const std::uint64_t free = std::uint64_t(fsys.f_bavail) * std::uint64_t(fsys.f_frsize);
  const std::uint64_t room = g_most > 0 ? std::min(g_most, free - free / 10) : free - free / 10;
  if (room < STARPU_DISK_SIZE_MIN)
    throw InputError(g_option + g_dir + ": " + bytes_text(double(free)) + " free there" +
                     (g_most > 0 ? " (STARPU_DISK_SWAP_SIZE " + bytes_text(double(g_most)) + ")" : "") +
                     "; StarPU's disk node needs 16 MiB at least, and the run leaves a tenth free");
  return room;
}

/// Why a read or write of StarPU's disk node moved fewer bytes than asked (err -1).
std::string short_transfer_cause(const std::string& dir) {
  struct statvfs fsys {};
  if (statvfs(dir.c_str(), &fsys) == 0 && std::uint64_t(fsys.f_bavail) * fsys.f_frsize < (std::uint64_t(1) << 20))
    return os_cause(ENOSPC);
  struct rlimit fsize {};
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY) return os_cause(EFBIG);
  return "fewer bytes than asked were moved (the disk is full, or the file was cut short)";
}

/// StarPU's disk node failed to read or write one of its files (scripts/starpu/disk_errors.pl):
/// nothing can unwind from StarPU's thread, so the run ends here in one line naming the folder
/// and the cause, exit 1, with its scratch folder, temporaries and lock removed.
void on_disk_failure(const char* what, const char* path, int err) {
  static std::atomic<bool> ending{false};
  if (ending.exchange(true))
    for (;;) pause();  // another thread's failure ends the process
  std::string verb = what ? what : "accessing";
  if (verb == "accessing" && (err == ENOSPC || err == EDQUOT || err == EFBIG || err < 0)) verb = "writing";
  if (verb == "accessing") verb = "reading or writing";
  std::string cause = err > 0 ? os_cause(err) : short_transfer_cause(g_dir);
  if (err == ENOENT) cause += " (the folder was removed while the run used it)";
  if (err == EMFILE || err == ENFILE) cause += " (the open-files limit: ulimit -n)";
  const std::string line = mpi::prefix() + error_prefix() + printable(g_option + g_dir) +
                           ": the store out of core: " + verb + " " + printable(path ? path : g_folder) + ": " + cause +
                           "\n";
  std::fputs(line.c_str(), stderr);
  mpi::abort_all(1);
}

/// Refuses (InputError naming `name`) a file of `bytes` above this process's file-size limit.
void refuse_above_file_size(const std::string& name, std::uint64_t bytes, const std::string& what) {
  struct rlimit fsize {};
  if (getrlimit(RLIMIT_FSIZE, &fsize) != 0 || fsize.rlim_cur == RLIM_INFINITY || bytes <= fsize.rlim_cur) return;
  throw InputError(name + ": " + what + " " + bytes_text(double(bytes)) +
                   ", more than this process's file-size limit (ulimit -f) of " + bytes_text(double(fsize.rlim_cur)) +
                   ": raise it" + (bytes > STARPU_DISK_SIZE_MIN ? ", or give --checkpoint-every fewer steps" : ""));
}

/// Refuses (InputError) an open-files limit below what out of core needs: StarPU keeps 64 of
/// its files open, beside what the run holds (StarPU would otherwise fail to create them and
/// wait for room for ever).
void require_open_files(const std::string& name) {
  struct rlimit files {};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return;
  long open_now = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/self/fd", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    ++open_now;
  // StarPU's own as it starts (its models, the bus files, hwloc, the MPI library's), the
  // outputs, the inputs read as the run goes: 64 more measured generously.
  const long need = open_now + kStarpuOpenFiles + 64;
  if (long(files.rlim_cur) >= need) return;
  throw InputError(name + ": out of core keeps up to " + std::to_string(kStarpuOpenFiles) +
                   " of StarPU's files open beside the run's own, about " + std::to_string(need) +
                   " files in all, more than this process's open-files limit (ulimit -n) of " +
                   std::to_string(files.rlim_cur) + ": raise it (ulimit -n " + std::to_string(need) +
                   ") or run without out of core");
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
  try {
    room_in(folder);  // refused now, before any lock or work, as at the start of the disk node
    require_open_files(name);
    // StarPU measures the disk with a file of its smallest size as it registers it.
    refuse_above_file_size(name, STARPU_DISK_SIZE_MIN, "StarPU's disk node writes files of");
  } catch (...) {
    g_dir.clear();
    throw;
  }
}

void set_planning(bool planning) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_planning = planning;
}

bool wanted() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return !g_dir.empty();
}

void start() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_dir.empty() || g_started) return;
  if (g_planning) {  // plan: what the run would have, and nothing made, nothing removed
    g_room = room_in(g_dir);
    g_started = true;
    return;
  }
  remove_abandoned(g_dir);
  // A name no other process has, in any PID namespace: the pid, then mkdtemp's letters.
  std::string folder = (fs::path(g_dir) / (own_prefix() + std::to_string(getpid()) + ".XXXXXX")).string();
  if (!mkdtemp(folder.data())) throw InputError(g_option + g_dir + ": cannot make a folder there: " + os_cause(errno));
  safety::track(folder, true);
  const auto undo = [&] {
    safety::untrack(folder);
    safety::remove_folder(folder);
    if (g_owner_fd >= 0) close(g_owner_fd);
    g_owner_fd = -1;
  };
  const std::string owner = (fs::path(folder) / kOwnerFile).string();
  g_owner_fd = open(owner.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const std::string signed_text = kSignature + "pid " + std::to_string(getpid()) + "\n";
  if (g_owner_fd < 0 || flock(g_owner_fd, LOCK_EX | LOCK_NB) != 0 ||
      write(g_owner_fd, signed_text.data(), signed_text.size()) != ssize_t(signed_text.size())) {
    const int err = errno;
    undo();
    throw InputError(g_option + g_dir + ": cannot make the lock of its folder " + folder + ": " + os_cause(err));
  }
  std::uint64_t room = 0;
  try {
    room = room_in(folder);
  } catch (...) {
    undo();
    throw;
  }
  // StarPU keeps the path it is given: a string that lives as long as the process.
  static std::string registered;
  registered = folder;
  if (&starpu_disk_fatal_error_hook) starpu_disk_fatal_error_hook = on_disk_failure;
  g_folder = folder;  // the hook names it, from here on
  if (starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(registered.c_str()), starpu_ssize_t(room)) < 0) {
    g_folder.clear();
    undo();
    throw RuntimeError(g_option + g_dir + ": StarPU could not start a disk node there");
  }
  g_room = room;
  g_started = true;
}

void stop() noexcept {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_started = false;
  g_room = 0;
  if (g_folder.empty()) return;
  safety::untrack(g_folder);
  safety::remove_folder(g_folder);  // its owner file too, still locked: no other run judges it meanwhile
  if (g_owner_fd >= 0) close(g_owner_fd);
  g_owner_fd = -1;
  g_folder.clear();
}

std::string given() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_dir.empty() ? std::string() : g_option + g_dir;
}

bool active() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_started;
}

std::uint64_t room() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return g_room;
}

void require_file_size(std::uint64_t bytes, const std::string& what) { refuse_above_file_size(given(), bytes, what); }

memory::MemoryRoom disk_room() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  return {g_room, g_most > 0 && g_room == g_most ? "STARPU_DISK_SWAP_SIZE allows"
                                                 : "StarPU may use there (nine tenths of its free space)"};
}

std::uint64_t cpu_limit_mib(std::uint64_t available) {
  // An eighth and 16 MiB left for what the run holds outside StarPU (inputs read as it
  // goes, the results as they are written).
  const std::uint64_t mib = available >> 20, keep = mib / 8 + 16;
  return mib >= keep + 16 ? mib - keep : 0;
}

}  // namespace starwave::scratch
