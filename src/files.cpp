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
#include <map>
#include <mutex>
#include <new>
#include <sstream>

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
  // Created here, exclusively and not through a link: whatever waits under a name (a link
  // planted where a temporary will be, a stale file) is passed over, never written.
  for (int attempt = 0;; ++attempt) {
    path_ = (fs::path(folder_of(t)) / (hidden_name(t.filename().string(), ".tmp.", kTemporaryTail) +
                                       std::to_string(getpid()) + "." + std::to_string(serial++)))
                .string();
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      close(fd);
      break;
    }
    if (errno != EEXIST || attempt == 1000)
      throw RuntimeError(target + ": cannot create its temporary file " + path_ + ": " + os_cause(errno));
  }
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
    throw RuntimeError(target_ + ": cannot move the finished output into place: " + os_cause(err));
  }
  unpin(target_);
  untrack(path_);
  live_ = false;
}

// ---- InputPins ---------------------------------------------------------------------------

namespace {

struct PinRegistry {
  std::mutex lock;
  std::map<std::string, struct stat> pins;  // by absolute, normalised path: the file as first read
};
std::atomic<PinRegistry*> g_pins{nullptr};

std::string pin_key(const std::string& path) {
  std::error_code ec;
  const fs::path a = fs::absolute(path, ec);
  return (ec ? fs::path(path) : a).lexically_normal().string();
}

}  // namespace

InputPins::InputPins() { g_pins.store(new PinRegistry); }

InputPins::~InputPins() { delete g_pins.exchange(nullptr); }

void require_unchanged(const std::string& path, int fd) {
  PinRegistry* r = g_pins.load();
  struct stat now {};
  if (!r || fstat(fd, &now) != 0) return;
  std::lock_guard<std::mutex> hold(r->lock);
  const auto [it, first] = r->pins.emplace(pin_key(path), now);
  if (first) return;
  const struct stat& was = it->second;
  if (now.st_dev != was.st_dev || now.st_ino != was.st_ino)
    throw RuntimeError(path +
                       ": replaced while this run was reading it (another file took its name); run again once "
                       "the file is final");
  if (now.st_size != was.st_size || now.st_mtim.tv_sec != was.st_mtim.tv_sec ||
      now.st_mtim.tv_nsec != was.st_mtim.tv_nsec)
    throw RuntimeError(path +
                       ": changed while this run was reading it (rewritten in place: its size or modification "
                       "time differs from its first reading); run again once the file is final");
}

void unpin(const std::string& path) {
  PinRegistry* r = g_pins.load();
  if (!r) return;
  std::lock_guard<std::mutex> hold(r->lock);
  r->pins.erase(pin_key(path));
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

namespace {

/// Whether `path` is a symbolic link (dangling or not); `to` is where it points.
bool is_link(const std::string& path, std::string& to) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return false;
  to = fs::read_symlink(path, ec).string();
  return true;
}

/// A lock file's pid as the file says it, digits only (the file may be anyone's).
std::string pid_in(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string who;
  for (ssize_t i = 0; i < n && std::isdigit(static_cast<unsigned char>(buf[i])); ++i) who += buf[i];
  return who;
}

}  // namespace

void refuse_link(const std::string& path, const std::string& advice) {
  std::string to;
  if (is_link(path, to))
    throw InputError(path + ": is a symbolic link (to " + to + "); starwave neither writes through a link nor " +
                     "replaces one: " + advice);
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
  refuse_input_as_output(path, option, inputs);  // a link to an input is named as that, first
  refuse_link(path, "give " + option + " the file's own name");
  const fs::file_status st = fs::symlink_status(target, ec);
  if (fs::is_directory(st)) throw InputError(path + ": is a folder; " + option + " needs a file name");
  if (fs::exists(st) && !fs::is_regular_file(st))  // /dev/null, a pipe, a socket
    throw InputError(path + ": is not a regular file; " + option + " needs a file name");
  // Refuse first, then claim: a run that will be refused touches nothing, its lock included.
  const std::string exists_already = path + ": exists already; pass --overwrite to replace it";
  if (fs::exists(st) && !overwrite) throw InputError(exists_already);
  if (lock) {
    const std::string lock_path = (target.parent_path() / hidden_name(target.filename().string(), ".lock", 0)).string();
    // The lock is a plain file of its own: never a link (whose target the pid would
    // overwrite), a second name of another file, a device or a pipe.
    auto not_a_lock = [&](const std::string& what) {
      return InputError(path + ": its lock file " + lock_path + " is " + what +
                        ", not a lock starwave made; remove it and run again");
    };
    for (;;) {
      std::string to;
      if (is_link(lock_path, to)) throw not_a_lock("a symbolic link (to " + to + ")");
      struct stat named {};
      if (lstat(lock_path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) throw not_a_lock("not a regular file");
      const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
      if (fd < 0 && errno == ELOOP) throw not_a_lock("a symbolic link");
      if (fd < 0) throw InputError(path + ": cannot create its lock file " + lock_path + ": " + os_cause(errno));
      struct stat held {};
      if (fstat(fd, &held) != 0 || !S_ISREG(held.st_mode) || held.st_nlink != 1) {
        close(fd);
        throw not_a_lock(S_ISREG(held.st_mode) ? "another name of a file (a hard link)" : "not a regular file");
      }
      if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const std::string who = pid_in(fd);
        close(fd);
        throw InputError(path + ": another starwave run" + (who.empty() ? "" : " (pid " + who + ")") +
                         " is writing it; wait for that run to end or choose another " + option);
      }
      // The holder may have removed the lock file between our open and flock: the lock
      // counts only on the file that is still under that name.
      if (lstat(lock_path.c_str(), &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
        fd_ = fd;
        lock_path_ = lock_path;
        break;
      }
      close(fd);
    }
    track(lock_path_);
    // Another run may have finished this output between the check above and the lock.
    if (fs::exists(fs::symlink_status(target, ec)) && !overwrite) {
      release();
      throw InputError(exists_already);
    }
    remove_stale_temporaries(dir, target.filename().string());
    const std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
      const int err = errno;
      release();
      throw InputError(path + ": cannot write its lock file " + lock_path + ": " + os_cause(err));
    }
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

namespace {

/// The value of `key` ("MemAvailable:", "VmSize:") in a /proc file of "key value kB" lines,
/// in bytes; `found` false when absent.
std::uint64_t proc_kib(const char* file, const std::string& key, bool& found) {
  std::ifstream in(file);
  std::string line;
  found = false;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      found = true;
      return std::strtoull(line.c_str() + key.size(), nullptr, 10) * 1024;
    }
  return 0;
}

/// The first whole number in file `path` ("max" and a missing file: none).
bool read_number(const std::string& path, std::uint64_t& value) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || !std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  value = std::strtoull(word.c_str(), nullptr, 10);
  return true;
}

/// `key`'s value in a memory.stat file (0 when absent).
std::uint64_t stat_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

std::string limit_text(std::uint64_t bytes) { return bytes_text(double(bytes)); }

}  // namespace

CgroupRoom cgroup_room(const std::string& proc_self_cgroup, const std::string& v2_root, const std::string& v1_root) {
  CgroupRoom best;
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    // "0::/path" (v2) or "N:controller,list:/path" (v1, the memory controller's line)
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const bool v2 = controllers.empty();
    bool memory = false;
    std::istringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) memory = memory || c == "memory";
    if (!v2 && !memory) continue;
    const std::string root = v2 ? v2_root : v1_root;
    if (root.empty()) continue;
    const char* limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
    const char* inactive = v2 ? "inactive_file" : "total_inactive_file";
    // The group and each group above it (a parent's limit binds too); in a container the
    // path may name groups above its own root, which then stands for them.
    fs::path group = fs::path(root) / fs::path(line.substr(b + 1)).relative_path();
    for (;;) {
      std::uint64_t limit = 0, used = 0;
      std::error_code ec;
      if (fs::is_directory(group, ec) && read_number((group / limit_file).string(), limit) &&
          limit < (std::uint64_t(1) << 62) && read_number((group / usage_file).string(), used)) {
        const std::uint64_t reclaimable = stat_value((group / "memory.stat").string(), inactive);
        const std::uint64_t held = used > reclaimable ? used - reclaimable : 0;
        const std::uint64_t room = limit > held ? limit - held : 0;
        if (!best.limited || room < best.room) best = {true, room, limit};
      }
      if (group == fs::path(root) || !group.has_parent_path() || group.parent_path() == group) break;
      const std::string g = group.string();
      if (g.size() <= root.size()) break;
      group = group.parent_path();
    }
  }
  return best;
}

MemoryRoom address_room() {
  MemoryRoom r{std::numeric_limits<std::uint64_t>::max(), "no address-space limit"};
  struct rlimit lim {};
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    bool found = false;
    const std::uint64_t mapped = proc_kib("/proc/self/status", "VmSize:", found);
    r = {lim.rlim_cur > mapped ? lim.rlim_cur - mapped : 0,
         "this process's address-space limit (ulimit -v) of " + limit_text(lim.rlim_cur) + " leaves"};
  }
  return r;
}

MemoryRoom memory_room() {
  MemoryRoom r;
  bool found = false;
  r.bytes = proc_kib("/proc/meminfo", "MemAvailable:", found);
  if (!found) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    r.bytes =
        pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : std::numeric_limits<std::uint64_t>::max();
  }
  r.bound = "this machine has available";
  auto tighter = [&r](std::uint64_t bytes, const std::string& bound) {
    if (bytes < r.bytes) r = {bytes, bound};
  };
  {
    std::ifstream in("/proc/self/cgroup");
    std::stringstream text;
    text << in.rdbuf();
    std::error_code ec;
    const std::string v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers", ec) ? "/sys/fs/cgroup" : "";
    const CgroupRoom c = cgroup_room(text.str(), v2, "/sys/fs/cgroup/memory");
    if (c.limited) tighter(c.room, "its memory cgroup's limit of " + limit_text(c.limit) + " leaves");
  }
  // The limits of this process: what it maps already counts against them.
  if (const MemoryRoom a = address_room(); a.bytes < r.bytes) r = a;
  struct rlimit lim {};
  if (getrlimit(RLIMIT_DATA, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t data = proc_kib("/proc/self/status", "VmData:", found);
    tighter(lim.rlim_cur > data ? lim.rlim_cur - data : 0,
            "this process's data limit (ulimit -d) of " + limit_text(lim.rlim_cur) + " leaves");
  }
  return r;
}

std::uint64_t available_memory() { return memory_room().bytes; }

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

namespace {

thread_local std::vector<std::string> t_uses;  // innermost last
char g_failed_use[1024];                       // written by the new-handler, without allocating
std::atomic<bool> g_failed_named{false};

void on_failed_allocation() {
  if (!t_uses.empty() && !g_failed_named.exchange(true)) {
    const std::string& use = t_uses.back();
    const std::size_t n = std::min(use.size(), sizeof g_failed_use - 1);
    std::memcpy(g_failed_use, use.data(), n);
    g_failed_use[n] = '\0';
  }
  throw std::bad_alloc();
}

}  // namespace

MemoryUse::MemoryUse(std::string what) { t_uses.push_back(std::move(what)); }
MemoryUse::~MemoryUse() { t_uses.pop_back(); }

void name_failed_allocations() { std::set_new_handler(on_failed_allocation); }

std::string out_of_memory_use() { return g_failed_named.load() ? std::string(g_failed_use) : std::string(); }

void require_memory(std::uint64_t count, std::uint64_t element_bytes, const std::string& what) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  if (element_bytes != 0 && count > limit / element_bytes)
    throw InputError(what + ": " + std::to_string(count) + " values is more than any machine can hold");
  const std::uint64_t bytes = count * element_bytes;
  const MemoryRoom have = memory_room();
  if (bytes > have.bytes)
    throw InputError(what + ": needs " + bytes_text(double(bytes)) + " of memory, more than the " +
                     bytes_text(double(have.bytes)) + " " + have.bound);
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
