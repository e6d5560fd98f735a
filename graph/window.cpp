#include "graph/window.hpp"

#include <starpu.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "graph/resting.hpp"

namespace starwave::graph {

Window::Window(int size, int total, std::function<void(int, int)> progress)
    : size_(size), total_(total), unwinding_(std::uncaught_exceptions()), progress_(std::move(progress)) {
  if (size < 1) throw std::invalid_argument("graph::Window: a window holds at least one shot");
  starpu_pthread_mutex_init(&mutex_, nullptr);
  starpu_pthread_cond_init(&cv_, nullptr);
}

Window::~Window() {
  if (std::uncaught_exceptions() > unwinding_) {
    wake();
    starpu_task_wait_for_all();  // callbacks included
  }
  starpu_pthread_cond_destroy(&cv_);
  starpu_pthread_mutex_destroy(&mutex_);
}

void Window::admit() {
  wake();  // the shots in flight finish only on running workers
  const Lock lock(*this);
  wait_until([&] { return admitted_ - done_ < size_; });
  ++admitted_;
  most_ = std::max(most_, admitted_ - done_);
}

void Window::wait_for_room() {
  wake();
  const Lock lock(*this);
  wait_until([&] { return admitted_ - done_ < size_; });
}

void Window::done(void* window) {
  // It notifies under the lock: StarPU releases a task's data before it runs the task's
  // callback, so the submitting thread may be about to destroy the window, which it does
  // only after drain() has seen this shot (and thus after the lock is let go).
  Window* w = static_cast<Window*>(window);
  const Lock lock(*w);
  ++w->done_;
  if (w->progress_) w->progress_(w->done_, w->total_);
  starpu_pthread_cond_broadcast(&w->cv_);
}

void Window::drain() {
  wake();
  const Lock lock(*this);
  wait_until([&] { return done_ == admitted_; });
}

int Window::most_in_flight() const {
  const Lock lock(*this);
  return most_;
}

}  // namespace starwave::graph
