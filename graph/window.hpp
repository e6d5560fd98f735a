// graph/window.hpp — the submission window of docs/design.md §3: at most `size` of this rank's
// shots in flight, so memory is bounded by the window and not by the number of shots. The
// workflow admits a shot before it registers the shot's data (waiting while the window is
// full) and gives the shot's last task the window's callback, which frees its place. Its lock
// and condition are StarPU's (starpu_thread.h): POSIX threads' on a machine, and under
// StarPU-SimGrid the simulation's, where a POSIX wait would stop every simulated worker.
#pragma once

#include <starpu_thread.h>

#include <deque>
#include <functional>
#include <utility>

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
  /// Waits until a place is free, without taking it (what admit() would wait for).
  void wait_for_room();
  /// The callback (and its argument, the window) of a shot's last task: frees its place.
  static void done(void* window);
  /// Waits until every admitted shot is done.
  void drain();

  int size() const { return size_; }
  /// The most shots in flight at once so far.
  int most_in_flight() const;

 private:
  /// Holds the window's lock for its lifetime.
  class Lock {
   public:
    explicit Lock(const Window& w) : m_(&w.mutex_) { starpu_pthread_mutex_lock(m_); }
    ~Lock() { starpu_pthread_mutex_unlock(m_); }
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    starpu_pthread_mutex_t* m_;
  };
  /// Waits on the condition, the lock held, until `ready()`.
  template <typename F>
  void wait_until(F&& ready) {
    while (!ready()) starpu_pthread_cond_wait(&cv_, &mutex_);
  }

  mutable starpu_pthread_mutex_t mutex_;
  starpu_pthread_cond_t cv_;
  int size_, total_, admitted_ = 0, done_ = 0, most_ = 0;
  int unwinding_;  // exceptions in flight when the window was made
  std::function<void(int, int)> progress_;
};

/// Shots in flight handed on in the order they were submitted (modeling: rank 0 hands each
/// shot's traces on as they come, in order): at most `size` held, the submitting thread
/// finishing the oldest (`finish(item)`: waits for its data and hands it on) before it holds
/// one more. Unlike Window it waits on the submitting thread, shot by shot in order, which is
/// what an ordered hand-on needs; the memory bound is the same.
template <typename Item>
class InOrder {
 public:
  InOrder(int size, std::function<void(Item&)> finish) : size_(size < 1 ? 1 : size), finish_(std::move(finish)) {}

  /// Holds `item`; with `size` held, finishes the oldest.
  void add(Item item) {
    held_.push_back(std::move(item));
    if (int(held_.size()) >= size_) finish_oldest();
  }
  /// Finishes every item held, oldest first.
  void drain() {
    while (!held_.empty()) finish_oldest();
  }

 private:
  void finish_oldest() {
    Item oldest = std::move(held_.front());
    held_.pop_front();
    finish_(oldest);
  }

  int size_;
  std::function<void(Item&)> finish_;
  std::deque<Item> held_;
};

}  // namespace starwave::graph
