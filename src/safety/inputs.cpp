// src/safety/inputs.cpp — see inputs.hpp.
#include "src/safety/inputs.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>

#include "src/base/error.hpp"

namespace starwave::safety {
namespace fs = std::filesystem;

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

/// What a file that is not a regular file is, said for a message.
std::string kind_of(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void require_input_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw InputError(path + ": no such file");
    throw InputError(path + ": cannot look at it (" + os_cause(errno) + ")");
  }
  if (S_ISREG(st.st_mode)) return;
  throw InputError(path + ": " + kind_of(st) +
                   ", not a regular file: starwave reads its inputs from files (some more than once); write it to "
                   "a file first");
}

void require_input_folder(const std::string& path, const std::string& what) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw InputError(what + ": " + path + ": " +
                     (errno == ENOENT || errno == ENOTDIR ? std::string("no such folder") : os_cause(errno)));
  if (!S_ISDIR(st.st_mode)) throw InputError(what + ": " + path + ": " + kind_of(st) + ", not a folder");
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat e {};
    if (stat(it->path().c_str(), &e) != 0)
      throw InputError(what + ": " + it->path().string() + ": " + os_cause(errno) + " (a dangling link?)");
    if (!S_ISREG(e.st_mode) && !S_ISDIR(e.st_mode))
      throw InputError(what + ": " + it->path().string() + ": " + kind_of(e) +
                       ", not a regular file: the folder may hold only files and folders");
  }
  if (ec) throw InputError(what + ": " + path + ": cannot read the folder (" + os_cause(ec.value()) + ")");
}

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

}  // namespace starwave::safety
