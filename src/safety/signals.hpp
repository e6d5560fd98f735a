// src/safety/signals.hpp — what a signal does to a run: the paths a run must not leave
// behind (temporaries, locks, output folders) are removed on every exit path, and fwi may
// ask for a graceful stop (docs/design.md §5).
#pragma once

#include <string>

namespace starwave::safety {

/// Installs the handlers of SIGINT, SIGTERM and SIGHUP (remove every tracked path, then
/// die by the signal, or — while a graceful stop is armed — only note the first signal),
/// and ignores SIGPIPE and SIGXFSZ so that a full disk or a file-size limit becomes a
/// failed write with its message, not a signal. Called once, first thing in main.
void install_signal_handlers();

/// While armed (fwi), the first SIGINT/SIGTERM/SIGHUP only sets stop_requested(): the run
/// ends at the next safe point and saves its state; a second one ends it at once.
void arm_graceful_stop(bool armed);
bool stop_requested();
int stop_signal();

/// A stop asked by the caller, not by a signal (Ctrl-C under Python, whose own handler keeps
/// SIGINT): the shot loops start no new shot once it is set and throw Interrupted when their
/// shots under way have finished. Cleared by the caller before its next run.
void request_interrupt();
void clear_interrupt();
bool interrupt_requested();

/// Paths removed on every exit path (async-signal-safe removal): files, and folders
/// (removed after the files, and only when empty).
void track(const std::string& path);
/// `empty_first`: a folder whose contents are all removed before it, whoever named them
/// (StarPU's scratch files, in folders of their own).
void track(const std::string& path, bool empty_first);
/// Whether `pid` names another process that no longer runs (what a run killed outright
/// leaves behind is removed by the next one on that test).
bool process_gone(long pid);
/// Removes folder `path` and everything inside it (async-signal-safe; no links followed).
void remove_folder(const std::string& path) noexcept;
void untrack(const std::string& path);
/// A child process group (a projection's simulator) killed with the run on every exit path
/// (remove_tracked): a plan ended by a signal ends its simulation. One at a time.
void track_child(int process_group);
void untrack_child(int process_group);
/// Removes every tracked path; async-signal-safe (the signal and device-fault handlers). Only
/// as the process ends: it first closes the descriptors install_signal_handlers() kept in
/// reserve for it.
void remove_tracked() noexcept;
/// Removes the temporaries of `target` that runs killed outright (SIGKILL) left beside it
/// (`.NAME.tmp.PID.N` whose process is gone).
void remove_stale_temporaries_of(const std::string& target);

}  // namespace starwave::safety
