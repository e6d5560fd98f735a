// tests/background.hpp — running a command in the background and watching an inversion's
// restart state, for the tests that kill a run part-way (test_cli, test_mpi).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "src/io/hdf5.hpp"

namespace starwave::test {

/// Starts `command` (a shell command line, output discarded) and returns its pid, or −1.
inline int start_in_background(const std::string& command) {
  FILE* p = popen((command + " >/dev/null 2>&1 & echo $!").c_str(), "r");
  if (!p) return -1;
  int pid = -1;
  if (std::fscanf(p, "%d", &pid) != 1) pid = -1;
  pclose(p);
  return pid;
}

/// Waits (10 s at most) until process `pid` is gone. A command started by
/// start_in_background() is not this process's child (its shell has exited), so waitpid()
/// cannot wait for it, and under load a killed run takes a moment to go.
inline void wait_until_gone(int pid) {
  for (int tries = 0; tries < 1000 && kill(pid, 0) == 0; ++tries) usleep(10000);
}

/// Polls the restart state `state` (every 10 ms, 60 s at most) until it records at least
/// `iteration` completed iterations; returns the last iteration seen (−1: no state).
inline int wait_for_saved_iteration(const std::string& state, int iteration) {
  int reached = -1;
  for (int tries = 0; tries < 6000 && reached < iteration; ++tries) {
    usleep(10000);
    if (!std::filesystem::exists(state)) continue;
    try {
      reached = int(io::read_record(state, {}, {"iteration"}).scalars.at("iteration"));
    } catch (const std::exception&) {  // caught between the temporary and the rename
    }
  }
  return reached;
}

}  // namespace starwave::test
