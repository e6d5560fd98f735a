// src/files.cpp — see files.hpp.
#include "src/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "src/error.hpp"

namespace starwave::files {
namespace fs = std::filesystem;

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

/// The name of a hidden file beside output `name`: "." + name + suffix, then `extra` more
/// characters. A name near the file system's limit (255 bytes) keeps its first bytes and
/// a hash of the whole, so every legal output name has its temporary and lock.
std::string hidden_name(const std::string& name, const std::string& suffix, std::size_t extra) {
  constexpr std::size_t kNameMax = 255;
  if (1 + name.size() + suffix.size() + extra <= kNameMax) return "." + name + suffix;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the same in every run and build
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  const std::size_t keep = kNameMax - 1 - 1 - 16 - suffix.size() - extra;
  return "." + name.substr(0, keep) + "~" + hex + suffix;
}
constexpr std::size_t kTemporaryTail = 24;  // "PID.SERIAL" after ".tmp."

/// Temporaries of `name` left by runs that died without a chance to remove them (SIGKILL,
/// a power cut): `.NAME.tmp.PID.N` whose process is gone. Called with the output's lock
/// held, so no live run of ours is writing one.
void remove_stale_temporaries(const std::string& dir, const std::string& name) {
  const std::string prefix = hidden_name(name, ".tmp.", kTemporaryTail);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(file.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && pid != long(getpid()) && kill(pid_t(pid), 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
  }
}

std::string folder_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path().string() : std::string(".");
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

void remove_stale_temporaries_of(const std::string& target) {
  const fs::path t(target);
  remove_stale_temporaries(folder_of(t), t.filename().string());
}

// ---- Temporary --------------------------------------------------------------------------

Temporary::Temporary(const std::string& target) : target_(target) {
  static std::atomic<unsigned> serial{0};
  const fs::path t(target);
  path_ = (fs::path(folder_of(t)) / (hidden_name(t.filename().string(), ".tmp.", kTemporaryTail) +
                                     std::to_string(getpid()) + "." + std::to_string(serial++)))
              .string();
  track(path_);
}

Temporary::~Temporary() { discard(); }

void Temporary::discard() noexcept {
  if (!live_) return;
  unlink(path_.c_str());
  untrack(path_);
  live_ = false;
}

void Temporary::commit() {
  if (std::rename(path_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    throw InputError(target_ + ": cannot move the finished output into place: " + os_cause(err));
  }
  untrack(path_);
  live_ = false;
}

// ---- OutputClaim ------------------------------------------------------------------------

namespace {

/// Extensions people give files, and the format each one says.
struct KnownExtension {
  const char* ext;
  const char* says;
};
constexpr KnownExtension kKnownExtensions[] = {
    {".h5", "HDF5"},        {".hdf5", "HDF5"},      {".hdf", "HDF5"},        {".he5", "HDF5"},
    {".sgy", "SEG-Y"},      {".segy", "SEG-Y"},     {".png", "PNG"},         {".jpg", "JPEG"},
    {".jpeg", "JPEG"},      {".gif", "GIF"},        {".bmp", "BMP"},         {".tif", "TIFF"},
    {".tiff", "TIFF"},      {".webp", "WebP"},      {".svg", "SVG"},         {".pdf", "PDF"},
    {".eps", "PostScript"}, {".ps", "PostScript"},  {".su", "Seismic Unix"}, {".rsf", "Madagascar RSF"},
    {".npy", "NumPy"},      {".npz", "NumPy"},      {".pt", "PyTorch"},      {".pth", "PyTorch"},
    {".bin", "raw binary"}, {".f32", "raw binary"}, {".raw", "raw binary"},
};

const char* format_name(Format f) { return f == Format::kHdf5 ? "HDF5" : f == Format::kSegy ? "SEG-Y" : "PNG"; }

/// `path`'s extension in lower case, and the format it says (nullptr: none this list knows).
const char* extension_says(const std::string& path, std::string& ext) {
  ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  for (const KnownExtension& k : kKnownExtensions)
    if (ext == k.ext) return k.says;
  return nullptr;
}

}  // namespace

bool named_as(const std::string& path, Format f) {
  std::string ext;
  const char* says = extension_says(path, ext);
  return says && std::string(says) == format_name(f);
}

void refuse_other_format_name(const std::string& path, const std::string& option, Format writes) {
  const char* name = format_name(writes);
  const char* suggest = writes == Format::kHdf5 ? ".h5" : writes == Format::kSegy ? ".sgy" : ".png";
  std::string ext;
  const char* says = extension_says(path, ext);
  if (says && std::string(says) != name)
    throw InputError(option + ": " + path + ": this command writes " + name + ", and a name ending in " + ext +
                     " says " + says + ": give a name ending in " + suggest);
}

void refuse_input_as_output(const std::string& path, const std::string& option,
                            const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;  // a file that does not exist yet is none of the inputs
  for (const std::string& in : inputs) {
    if (in.empty()) continue;
    if (fs::equivalent(path, in, ec) && !ec)
      throw InputError(path + ": is also an input (" + in + "); " + option +
                       " must name another file (an input is never overwritten)");
  }
}

OutputClaim::OutputClaim(const std::string& path, const std::string& option, bool overwrite,
                         const std::vector<std::string>& inputs, bool lock) {
  if (path.empty()) throw InputError(option + ": an output file name is required");
  const fs::path target(path);
  const std::string dir = folder_of(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(path + ": the output folder " + dir + " does not exist");
  if (access(dir.c_str(), W_OK) != 0) throw InputError(path + ": the output folder " + dir + " is not writable");
  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::size_t most = name_max > 0 ? std::size_t(name_max) : 255;
  if (target.filename().string().size() > most)  // else it would fail at the rename, after the work
    throw InputError(path + ": a file name of " + std::to_string(target.filename().string().size()) +
                     " bytes; this file system allows " + std::to_string(most));
  if (fs::is_directory(target, ec)) throw InputError(path + ": is a folder; " + option + " needs a file name");
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec))  // /dev/null, a pipe, a socket
    throw InputError(path + ": is not a regular file; " + option + " needs a file name");
  refuse_input_as_output(path, option, inputs);
  if (lock) {
    const std::string lock_path = (fs::path(dir) / hidden_name(target.filename().string(), ".lock", 0)).string();
    for (;;) {
      const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) throw InputError(path + ": cannot create its lock file " + lock_path + ": " + os_cause(errno));
      if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = {};
        const ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        close(fd);
        std::string who = n > 0 ? std::string(pid, std::size_t(n)) : std::string();
        while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
        throw InputError(path + ": another starwave run" + (who.empty() ? "" : " (pid " + who + ")") +
                         " is writing it; wait for that run to end or choose another " + option);
      }
      // The holder may have removed the lock file between our open and flock: the lock
      // counts only on the file that is still under that name.
      struct stat held {
      }, named{};
      if (fstat(fd, &held) == 0 && stat(lock_path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
          held.st_ino == named.st_ino) {
        fd_ = fd;
        lock_path_ = lock_path;
        break;
      }
      close(fd);
    }
    track(lock_path_);
    remove_stale_temporaries(dir, target.filename().string());
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
      const int err = errno;
      release();
      throw InputError(path + ": cannot write its lock file " + lock_path + ": " + os_cause(err));
    }
  }
  if (fs::exists(target, ec) && !overwrite) {
    release();
    throw InputError(path + ": exists already; pass --overwrite to replace it");
  }
}

OutputClaim::~OutputClaim() { release(); }

OutputClaim::OutputClaim(OutputClaim&& o) noexcept : lock_path_(std::move(o.lock_path_)), fd_(o.fd_) {
  o.fd_ = -1;
  o.lock_path_.clear();
}

OutputClaim& OutputClaim::operator=(OutputClaim&& o) noexcept {
  if (this != &o) {
    release();
    lock_path_ = std::move(o.lock_path_);
    fd_ = o.fd_;
    o.fd_ = -1;
    o.lock_path_.clear();
  }
  return *this;
}

void OutputClaim::release() noexcept {
  if (fd_ < 0) return;
  unlink(lock_path_.c_str());  // while still holding it: a waiting run then retries on a new file
  untrack(lock_path_);
  close(fd_);
  fd_ = -1;
}

// ---- sizes ------------------------------------------------------------------------------

std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : std::numeric_limits<std::uint64_t>::max();
}

std::string bytes_text(double bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", bytes, unit[u]);
  return buf;
}

void require_memory(std::uint64_t count, std::uint64_t element_bytes, const std::string& what) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  if (element_bytes != 0 && count > limit / element_bytes)
    throw InputError(what + ": " + std::to_string(count) + " values is more than any machine can hold");
  const std::uint64_t bytes = count * element_bytes, have = available_memory();
  if (bytes > have)
    throw InputError(what + ": needs " + bytes_text(double(bytes)) + " of memory, more than the " +
                     bytes_text(double(have)) + " this machine has available");
}

void require_disk(const std::string& path, std::uint64_t bytes, const std::string& what) {
  const std::string dir = folder_of(fs::path(path));
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) == 0 && st.f_blocks > 0) {  // some pseudo file systems say 0 of 0
    const std::uint64_t free = std::uint64_t(st.f_bavail) * std::uint64_t(st.f_frsize);
    if (bytes > free)
      throw InputError(path + ": " + what + " needs " + bytes_text(double(bytes)) + " on disk, more than the " +
                       bytes_text(double(free)) + " free in " + dir);
  }
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && bytes > limit.rlim_cur)
    throw InputError(path + ": " + what + " needs " + bytes_text(double(bytes)) +
                     " on disk, more than this process's file-size limit (ulimit -f) of " +
                     bytes_text(double(limit.rlim_cur)));
}

std::string os_cause(int err) {
  switch (err) {
    case ENOSPC:
      return "no space left on device (the disk is full)";
    case EDQUOT:
      return "disk quota exceeded";
    case EFBIG:
      return "file too large (a file-size limit was reached)";
    case EROFS:
      return "read-only file system";
    case EACCES:
    case EPERM:
      return "permission denied";
    default:
      return std::strerror(err);
  }
}

}  // namespace starwave::files
