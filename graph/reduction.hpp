// graph/reduction.hpp — the fixed reduction tree of docs/design.md §3. Parts arrive in shot
// order and are summed as a binary counter counts: two partial sums that stand for the same
// number of parts merge (left += right) as soon as both exist, and what remains at the end
// merges right to left. Which parts are added to which depends only on their number, never
// on when or where they were computed, so the sum has the same bits on any mix of workers,
// ranks and schedules. `Merge` submits the sum (a reduce task) or, in the tests, computes it.
#pragma once

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace starwave::graph {

template <typename Part>
class ReductionTree {
 public:
  using Merge = std::function<void(Part& left, Part&& right)>;
  explicit ReductionTree(Merge merge) : merge_(std::move(merge)) {}

  /// The next part in order; merges what the binary counter says.
  void add(Part part) {
    held_.push_back({0, std::move(part)});
    most_held_ = std::max(most_held_, held_.size());
    while (held_.size() >= 2 && held_[held_.size() - 1].level == held_[held_.size() - 2].level) {
      merge_last();
      ++held_.back().level;
    }
  }

  /// The sum of every part given; the tree is empty afterwards.
  Part finish() {
    if (held_.empty()) throw std::logic_error("graph::ReductionTree: no part to sum");
    while (held_.size() >= 2) merge_last();
    Part root = std::move(held_.front().part);
    held_.clear();
    return root;
  }

  /// The most partial sums held at once so far, and a bound on it for `parts` parts (what
  /// a memory estimate counts).
  std::size_t most_held() const { return most_held_; }
  static int most_held(int parts) {
    int levels = 1;
    while ((1 << (levels - 1)) < parts) ++levels;
    return levels;
  }

 private:
  struct Held {
    int level;  // it stands for 2^level parts until the end
    Part part;
  };
  void merge_last() {
    Part right = std::move(held_.back().part);
    held_.pop_back();
    merge_(held_.back().part, std::move(right));
  }

  Merge merge_;
  std::vector<Held> held_;
  std::size_t most_held_ = 0;
};

}  // namespace starwave::graph
