// src/memory/room.hpp — what this process may still allocate, said before the work: the
// machine's available memory, its cgroup's limit and the process's own limits; and what a
// failed allocation was for.
#pragma once

#include <cstdint>
#include <string>

namespace starwave::memory {

/// What this process may still allocate, and what bounds it: the least of the machine's
/// MemAvailable (the physical memory where /proc/meminfo is missing), its memory cgroup's
/// limit less what the cgroup holds (v1 or v2, the group's and every group's above it;
/// reclaimable page cache not counted as held), the address-space limit (ulimit -v) less
/// what the process maps, and the data limit (ulimit -d) less its data.
struct MemoryRoom {
  std::uint64_t bytes = 0;
  std::string bound;  // for messages, after the bytes: "this machine has available", "… (ulimit -v) of 1 GiB leaves"
};
MemoryRoom memory_room();
/// --memory-limit: the bytes this run may hold in all (0: none); memory_room() then also
/// counts it, less what the process holds (VmRSS).
void set_memory_limit(std::uint64_t bytes);
/// A size as a user writes it: a whole number of bytes, or of KiB, MiB, GiB or TiB with the
/// suffix K, M, G or T (KiB, MiB … and KB, MB … read alike, binary units): "8G", "512MiB".
/// InputError naming `option` for anything else, zero, or more than 2^63 bytes.
std::uint64_t parse_size(const std::string& text, const std::string& option);
/// The address-space limit's part alone (bytes: the most a uint64 holds when unlimited).
MemoryRoom address_room();
/// memory_room().bytes.
std::uint64_t available_memory();

/// A memory cgroup's room, from /proc/self/cgroup's text and the mount points of the
/// unified (v2) and memory (v1) hierarchies ("" where absent): memory_room's part, apart
/// for the tests.
struct CgroupRoom {
  bool limited = false;
  std::uint64_t room = 0, limit = 0;
};
CgroupRoom cgroup_room(const std::string& proc_self_cgroup, const std::string& v2_root, const std::string& v1_root);

/// Names what this thread's allocations are for while it lives ("d.h5: /data"): should
/// one fail (std::bad_alloc), out_of_memory_use() says what asked for the memory.
class MemoryUse {
 public:
  explicit MemoryUse(std::string what);
  ~MemoryUse();
  MemoryUse(const MemoryUse&) = delete;
  MemoryUse& operator=(const MemoryUse&) = delete;
};
/// Installs the new-handler that notes the innermost MemoryUse of a failed allocation
/// (then throws std::bad_alloc as usual). Called once, in main.
void name_failed_allocations();
/// What the last failed allocation was for ("" when unnamed).
std::string out_of_memory_use();

/// Refuses (InputError) an allocation of `count` elements of `element_bytes` each that
/// overflows or exceeds the available memory. `what` names the file and dataset (or
/// the option) the size comes from.
void require_memory(std::uint64_t count, std::uint64_t element_bytes, const std::string& what);

/// While one lives, this thread's allocations are ones the memory plan counted (a shot's
/// traces read as it is submitted): require_memory checks only that a size can exist, not the
/// room left — that room is the plan's to spend, and what the plan's own buffers hold
/// already is not a reason to fail a run the plan accepted.
class Planned {
 public:
  Planned();
  ~Planned();
  Planned(const Planned&) = delete;
  Planned& operator=(const Planned&) = delete;
};

}  // namespace starwave::memory
