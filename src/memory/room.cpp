// src/memory/room.cpp — see room.hpp.
#include "src/memory/room.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <vector>

#include "src/base/error.hpp"

namespace starwave::memory {
namespace fs = std::filesystem;

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

namespace {
std::atomic<std::uint64_t> g_memory_limit{0};
}  // namespace

void set_memory_limit(std::uint64_t bytes) { g_memory_limit.store(bytes); }

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  const std::string refusal = option +
                              ": must be a size such as 8G, 512M or 1000000 (bytes; K, M, G, T: binary "
                              "units) (got '" +
                              text + "')";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) throw InputError(refusal);
  const std::uint64_t count = std::stoull(text.substr(0, digits));
  const std::string unit = text.substr(digits), letters = "KMGT";
  int shift = -1;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (const std::size_t k = letters.find(unit[0]); k != std::string::npos) {
    const std::string rest = unit.substr(1);
    if (rest.empty() || rest == "B" || rest == "iB") shift = 10 * int(k + 1);
  }
  if (shift < 0 || count == 0 || count > (std::uint64_t(1) << 63 >> shift)) throw InputError(refusal);
  return count << shift;
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
  if (const std::uint64_t limit = g_memory_limit.load(); limit > 0) {
    const std::uint64_t held = proc_kib("/proc/self/status", "VmRSS:", found);
    tighter(limit > held ? limit - held : 0,
            "--memory-limit " + limit_text(limit) + " leaves beside the " + limit_text(held) + " this process holds");
  }
  return r;
}

std::uint64_t available_memory() { return memory_room().bytes; }

namespace {

thread_local std::vector<std::string> t_uses;  // innermost last
thread_local int t_planned = 0;                // Planned scopes alive on this thread
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

Planned::Planned() { ++t_planned; }
Planned::~Planned() { --t_planned; }

MemoryUse::MemoryUse(std::string what) { t_uses.push_back(std::move(what)); }
MemoryUse::~MemoryUse() { t_uses.pop_back(); }

void name_failed_allocations() { std::set_new_handler(on_failed_allocation); }

std::string out_of_memory_use() { return g_failed_named.load() ? std::string(g_failed_use) : std::string(); }

void require_memory(std::uint64_t count, std::uint64_t element_bytes, const std::string& what) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  if (element_bytes != 0 && count > limit / element_bytes)
    throw InputError(what + ": " + std::to_string(count) + " values is more than any machine can hold");
  const std::uint64_t bytes = count * element_bytes;
  if (t_planned > 0) return;
  const MemoryRoom have = memory_room();
  if (bytes > have.bytes)
    throw InputError(what + ": needs " + bytes_text(double(bytes)) + " of memory, more than the " +
                     bytes_text(double(have.bytes)) + " " + have.bound);
}

}  // namespace starwave::memory
