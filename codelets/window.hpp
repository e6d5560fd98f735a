// codelets/window.hpp — the submission window of docs/design.md §3: at most `size` of this rank's
// shots in flight, so memory is bounded by the window and not by the number of shots. The
// workflow admits a shot before it registers the shot's data (waiting while the window is
// full) and gives the shot's last task the window's callback, which frees its place.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>

namespace starwave::graph {

class Window {
 public:
  /// `progress(done, total)` is called from the worker that ran a shot's last task.
  Window(int size, int total, std::function<void(int done, int total)> progress = {});
  /// Leaving by an exception, waits for every task submitted (their callbacks use the
  /// window); otherwise the workflow has drained it.
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  /// Waits until a place is free, then takes it for the next shot.
  void admit();
  /// The callback (and its argument, the window) of a shot's last task: frees its place.
  static void done(void* window);
  /// Waits until every admitted shot is done.
  void drain();

  int size() const { return size_; }
  /// The most shots in flight at once so far.
  int most_in_flight() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int size_, total_, admitted_ = 0, done_ = 0, most_ = 0;
  int unwinding_;  // exceptions in flight when the window was made
  std::function<void(int, int)> progress_;
};

}  // namespace starwave::graph
