// src/safety/outputs.cpp — see outputs.hpp.
#include "src/safety/outputs.hpp"

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
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "src/base/error.hpp"
#include "src/safety/inputs.hpp"
#include "src/safety/signals.hpp"

namespace starwave::safety {
namespace fs = std::filesystem;

namespace {

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
    if (process_gone(pid)) fs::remove(e.path(), ec);
  }
}

std::string folder_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path().string() : std::string(".");
}

}  // namespace

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

void refuse_folder_over_outputs(const std::string& folder, const std::string& option,
                                const std::vector<std::pair<std::string, std::string>>& outputs) {
  auto where = [](const std::string& p) {  // no error: a path that cannot be resolved compares as written
    std::error_code ec;
    const fs::path w = fs::weakly_canonical(fs::absolute(p, ec), ec);
    return ec ? fs::path(p).lexically_normal() : w;
  };
  const fs::path f = where(folder);
  for (const auto& [path, what] : outputs)
    if (f == where(path))
      throw InputError(option + ": " + folder + " is the name of " + what + "; choose another folder");
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
  for (const std::string& in : inputs)  // a pipe given as an input would block the run with its lock taken
    if (!in.empty()) require_input_file(in);
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

}  // namespace starwave::safety
