// src/safety/inputs.cpp — see inputs.hpp.
#include "src/safety/inputs.hpp"

#include <sys/stat.h>

#include <atomic>
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

}  // namespace starwave::safety
