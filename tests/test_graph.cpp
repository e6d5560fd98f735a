// tests/test_graph.cpp — the graph layer's pieces on their own (codelets/): the fixed
// reduction tree's pairing, the submission window's bound, and data that hands its handle
// back on every path (values home in the caller's memory, nothing left registered when an
// exception leaves a half-built graph).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "codelets/image.hpp"
#include "codelets/shot_buffers.hpp"
#include "graph/data.hpp"
#include "graph/reduction.hpp"
#include "graph/window.hpp"
#include "src/runtime/runtime.hpp"

namespace starwave::test {
namespace {

/// The tree's pairing for `n` parts named 0 … n−1, written out as nested sums.
std::string pairing(int n) {
  graph::ReductionTree<std::string> tree(
      [](std::string& left, std::string&& right) { left = "(" + left + "+" + right + ")"; });
  for (int k = 0; k < n; ++k) tree.add(std::to_string(k));
  return tree.finish();
}

TEST(ReductionTree, PairsLikeABinaryCounterThenRightToLeft) {
  EXPECT_EQ(pairing(1), "0");
  EXPECT_EQ(pairing(2), "(0+1)");
  EXPECT_EQ(pairing(3), "((0+1)+2)");
  EXPECT_EQ(pairing(4), "((0+1)+(2+3))");
  EXPECT_EQ(pairing(5), "(((0+1)+(2+3))+4)");
  EXPECT_EQ(pairing(6), "(((0+1)+(2+3))+(4+5))");
  EXPECT_EQ(pairing(7), "(((0+1)+(2+3))+((4+5)+6))");
  EXPECT_EQ(pairing(8), "(((0+1)+(2+3))+((4+5)+(6+7)))");
}

TEST(ReductionTree, HoldsNoMorePartialSumsThanTheMemoryEstimateCounts) {
  for (int n = 1; n <= 300; ++n) {
    graph::ReductionTree<int> tree([](int& left, int&& right) { left += right; });
    for (int k = 0; k < n; ++k) tree.add(1);
    EXPECT_LE(tree.most_held(), std::size_t(graph::ReductionTree<int>::most_held(n))) << n << " parts";
    EXPECT_EQ(tree.finish(), n);
  }
}

TEST(ReductionTree, SumsInItsOwnOrderNotTheArrivalOrder) {
  // Float sums depend on the order: the tree's result is the pairing above, not a running sum.
  const std::vector<float> parts{1e8f, 1.f, -1e8f, 1.f, 0.5f};
  graph::ReductionTree<float> tree([](float& left, float&& right) { left += right; });
  for (float v : parts) tree.add(v);
  const float expected = ((1e8f + 1.f) + (-1e8f + 1.f)) + 0.5f;
  float running = 0;
  for (float v : parts) running += v;
  EXPECT_EQ(tree.finish(), expected);
  EXPECT_NE(expected, running);  // the case tells the two apart
}

TEST(ReductionTree, RefusesToSumNothing) {
  graph::ReductionTree<int> tree([](int& left, int&& right) { left += right; });
  EXPECT_THROW(tree.finish(), std::logic_error);
}

/// For the duration of a test, graphs are built as if for rank 0 of `size` ranks.
struct PretendWorld {
  explicit PretendWorld(int size) { graph::set_world(0, size); }
  ~PretendWorld() { graph::set_world(0, 1); }
};

TEST(ShotOwners, BlocksOfConsecutiveShotsWhoseReductionCrossesRanksRarely) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    const PretendWorld world(ranks);
    for (int shots = 1; shots <= 200; ++shots) {
      std::vector<int> count(std::size_t(ranks), 0);
      for (int s = 0; s < shots; ++s) {
        const int r = graph::owner(s, shots);
        ASSERT_TRUE(r >= 0 && r < ranks) << s << " of " << shots;
        if (s > 0) {
          ASSERT_GE(r, graph::owner(s - 1, shots)) << "not a block: " << s << " of " << shots;
        }
        ++count[std::size_t(r)];
      }
      const auto [least, most] = std::minmax_element(count.begin(), count.end());
      EXPECT_LE(*most - *least, 1) << shots << " shots on " << ranks << " ranks";
      // The tree's merges whose halves live on different ranks: each is one message to the
      // left half's rank. Round-robin sent shots / 2 to rank 0; blocks at most log2(shots).
      std::vector<int> received(std::size_t(ranks), 0);
      graph::ReductionTree<int> tree([&](int& left, int&& right) {
        if (graph::owner(left, shots) != graph::owner(right, shots)) ++received[std::size_t(graph::owner(left, shots))];
      });  // a part is its first shot; a sum keeps its left part's
      for (int s = 0; s < shots; ++s) tree.add(int(s));
      tree.finish();
      int depth = 0;
      while ((1 << depth) < shots) ++depth;
      EXPECT_LE(*std::max_element(received.begin(), received.end()), depth) << shots << " shots, " << ranks << " ranks";
      // Submission order: every shot once, each rank's k-th shot before any rank's (k+1)-th.
      const std::vector<int> order = graph::interleaved_shots(shots);
      ASSERT_EQ(order.size(), std::size_t(shots));
      std::vector<int> seen(std::size_t(ranks), 0), place(std::size_t(shots), -1);
      for (std::size_t i = 0; i < order.size(); ++i) {
        ASSERT_EQ(place[std::size_t(order[i])], -1) << "shot " << order[i] << " twice";
        place[std::size_t(order[i])] = int(i);
        const int r = graph::owner(order[i], shots);
        ++seen[std::size_t(r)];
        for (int q = 0; q < ranks; ++q) {  // every rank with shots left has started as many, or one fewer
          if (seen[std::size_t(q)] < count[std::size_t(q)]) {
            ASSERT_LE(seen[std::size_t(r)], seen[std::size_t(q)] + 1);
          }
        }
      }
      for (int s = 1; s < shots; ++s) {
        if (graph::owner(s, shots) == graph::owner(s - 1, shots)) {
          EXPECT_LT(place[std::size_t(s - 1)], place[std::size_t(s)]) << "a rank's shots out of order";
        }
      }
      for (int s = 0; s < shots && ranks == 1; ++s) EXPECT_EQ(order[std::size_t(s)], s);
    }
  }
}

TEST(ShotOwners, BatchesAreRunsOfOneRanksConsecutiveShotsInTheInterleavedOrder) {
  for (int ranks = 1; ranks <= 5; ++ranks) {
    const PretendWorld world(ranks);
    for (int shots = 1; shots <= 40; ++shots)
      for (int batch : {1, 2, 3, 8, 64}) {
        const auto batches = graph::interleaved_batches(shots, batch);
        std::vector<int> flat;
        for (const auto& b : batches) {
          ASSERT_FALSE(b.empty());
          ASSERT_LE(int(b.size()), batch);
          for (std::size_t i = 0; i < b.size(); ++i) {
            ASSERT_EQ(graph::owner(b[i], shots), graph::owner(b[0], shots)) << "a batch across ranks";
            if (i > 0) {
              ASSERT_EQ(b[i], b[i - 1] + 1) << "a batch of shots not consecutive";
            }
          }
          flat.insert(flat.end(), b.begin(), b.end());
        }
        std::vector<int> sorted = flat;
        std::sort(sorted.begin(), sorted.end());
        for (int s = 0; s < shots; ++s) ASSERT_EQ(sorted[std::size_t(s)], s) << "every shot once";
        // Each rank's block is cut into full batches but its last.
        std::vector<int> partial(std::size_t(ranks), 0);
        for (const auto& b : batches)
          if (int(b.size()) < batch) ++partial[std::size_t(graph::owner(b[0], shots))];
        for (int r = 0; r < ranks; ++r) EXPECT_LE(partial[std::size_t(r)], 1);
        if (batch == 1) {
          EXPECT_EQ(flat, graph::interleaved_shots(shots));
        }
      }
  }
}

/// Every position 0 … count − 1 of a layout holds one part.
void expect_each_position_once(const codelets::ShotBuffers& b, const std::string& context) {
  std::vector<int> seen(std::size_t(b.count), 0);
  for (int at : {b.medium, b.nodes, b.signals, b.traces, b.work, b.store, b.final_state, b.checkpoints, b.correlation,
                 b.illumination}) {
    if (at < 0) continue;
    ASSERT_LT(at, b.count) << context;
    ++seen[std::size_t(at)];
  }
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << context << ", position " << i;
}

TEST(ShotBuffers, EachTaskKindsBuffersHaveOnePlaceEach) {
  using codelets::Keeps;
  for (Keeps k : {Keeps::kTraces, Keeps::kStore, Keeps::kInterval})
    for (bool checkpoints : {false, true})
      for (bool edge : {false, true}) {
        const std::string context = "keeps " + std::to_string(int(k)) + ", checkpoints " + std::to_string(checkpoints) +
                                    ", interval at the edge " + std::to_string(edge);
        expect_each_position_once(codelets::forward_buffers(k, checkpoints, edge), "forward, " + context);
        expect_each_position_once(codelets::adjoint_buffers(k, checkpoints, edge), "adjoint, " + context);
      }
  // The codelets' fixed counts: forward 5 / 7 / 8, adjoint 9 / 10; the intervals' as their edges ask.
  EXPECT_EQ(codelets::forward_buffers(Keeps::kTraces, false, true).count, 5);
  EXPECT_EQ(codelets::forward_buffers(Keeps::kStore, false, true).count, 7);
  EXPECT_EQ(codelets::forward_buffers(Keeps::kStore, true, true).count, 8);
  EXPECT_EQ(codelets::forward_buffers(Keeps::kInterval, false, false).final_state, -1);
  EXPECT_EQ(codelets::forward_buffers(Keeps::kInterval, false, true).final_state, 6);
  EXPECT_EQ(codelets::adjoint_buffers(Keeps::kStore, false, true).count, 9);
  EXPECT_EQ(codelets::adjoint_buffers(Keeps::kStore, true, true).checkpoints, 9);
  EXPECT_EQ(codelets::adjoint_buffers(Keeps::kInterval, false, true).final_state, 8);
  EXPECT_EQ(codelets::adjoint_buffers(Keeps::kInterval, false, false).count, 8);
  // A part the layout places without data is refused, not submitted.
  int a = 0;
  const auto h = reinterpret_cast<starpu_data_handle_t>(&a);
  codelets::ShotParts parts{
      {h, STARPU_R}, {h, STARPU_R}, {h, STARPU_R}, {h, STARPU_W}, {h, STARPU_SCRATCH}, {}, {}, {}, {}, {}};
  EXPECT_EQ(codelets::in_order(codelets::forward_buffers(Keeps::kTraces, false, true), parts).size(), 5u);
  EXPECT_EQ(codelets::in_order(codelets::forward_buffers(Keeps::kTraces, false, true), parts)[4].mode, STARPU_SCRATCH);
  EXPECT_THROW(codelets::in_order(codelets::forward_buffers(Keeps::kStore, false, true), parts), std::logic_error);
}

TEST(Window, AdmitsNoMoreThanItsSizeAndReportsEachShotDone) {
  std::vector<std::pair<int, int>> progress;
  graph::Window window(2, 3, [&](int done, int total) { progress.push_back({done, total}); });
  window.admit();
  window.admit();
  std::atomic<bool> third{false};
  std::thread submitter([&] {
    window.admit();  // must wait for a place
    third = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(third) << "a third shot was admitted into a window of 2";
  graph::Window::done(&window);
  submitter.join();
  EXPECT_TRUE(third);
  graph::Window::done(&window);
  graph::Window::done(&window);
  window.drain();
  EXPECT_EQ(window.most_in_flight(), 2);
  EXPECT_EQ(progress, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));
  EXPECT_THROW(graph::Window(0, 1), std::invalid_argument);
}

TEST(InOrder, HandsOnInSubmissionOrderHoldingNoMoreThanItsSize) {
  std::vector<int> handed;
  std::size_t most_held = 0;
  std::vector<int> held;
  graph::InOrder<int> in_order(3, [&](int& shot) {
    most_held = std::max(most_held, held.size());
    EXPECT_EQ(held.front(), shot) << "the oldest first";
    held.erase(held.begin());
    handed.push_back(shot);
  });
  for (int shot : {4, 0, 7, 2, 9}) {
    held.push_back(shot);
    in_order.add(shot);
    EXPECT_LT(held.size(), 3u) << "a third item is finished as it arrives";
  }
  in_order.drain();
  EXPECT_EQ(handed, (std::vector<int>{4, 0, 7, 2, 9}));
  EXPECT_EQ(most_held, 3u);
  EXPECT_TRUE(held.empty());
}

class GraphData : public ::testing::Test {
 protected:
  static RuntimeOptions options() {
    RuntimeOptions o;
    o.ncpus = 2;
    o.ncuda = 0;
    return o;
  }
  Runtime rt{options()};
};

TEST_F(GraphData, CallersMemoryHoldsTheValuesOnceItsDataGoes) {
  std::vector<double> sum{1, 2, 3};
  const std::vector<double> part{10, 20, 30};
  {
    graph::Data s = graph::owned_vector(0, sum.data(), sum.size(), sizeof(double));
    graph::Data p = graph::input_vector(0, part.data(), part.size(), sizeof(double));
    insert_reduce(s, p);
    graph::Data moved = std::move(s);  // the handle moves with it, and goes once
    EXPECT_FALSE(s);
    EXPECT_TRUE(moved);
  }  // waits for the task: the values are home
  EXPECT_EQ(sum, (std::vector<double>{11, 22, 33}));
}

TEST_F(GraphData, ATreeOfTasksSumsLikeTheTreeOfNumbers) {
  const int n = 11;
  std::vector<std::vector<float>> values(n);
  for (int k = 0; k < n; ++k) values[std::size_t(k)] = {1e7f * float(k % 3 - 1), 1.f / float(k + 1)};
  graph::ReductionTree<graph::Data> tree([](graph::Data& s, graph::Data&& p) { insert_reduce(s, p); });
  graph::ReductionTree<std::vector<float>> numbers([](std::vector<float>& s, std::vector<float>&& p) {
    for (std::size_t i = 0; i < s.size(); ++i) s[i] += p[i];
  });
  for (int k = 0; k < n; ++k) {
    tree.add(graph::input_vector(0, values[std::size_t(k)].data(), 2, sizeof(float)));  // StarPU's memory
    numbers.add(values[std::size_t(k)]);
  }
  graph::Data root = tree.finish();
  const std::vector<float> expected = numbers.finish();
  const graph::Reading r(root);
  EXPECT_EQ(r.values<float>()[0], expected[0]);
  EXPECT_EQ(r.values<float>()[1], expected[1]);
}

TEST_F(GraphData, AnExceptionLeavingAHalfBuiltGraphLeavesNothingRegistered) {
  std::vector<double> sum(1000, 1.0);
  const std::vector<double> part(1000, 2.0);
  EXPECT_THROW(
      {
        graph::Data s = graph::owned_vector(0, sum.data(), sum.size(), sizeof(double));
        graph::Data p = graph::input_vector(0, part.data(), part.size(), sizeof(double));
        graph::Data scratch = graph::scratch_vector(1000, sizeof(double));
        insert_reduce(s, p);
        graph::owned_vector(0, nullptr, std::size_t(1) << 33, sizeof(char));  // refused: past 2^32 − 1
      },
      graph::Refused);
  EXPECT_EQ(sum[999], 3.0);  // the task that was submitted ran, and its result came home
  // Runtime's shutdown then finds no handle registered (the sanitizer build checks no leak).
}

TEST_F(GraphData, AShotBufferHoldsAnyLengthInOneHandle) {
  // A 3-D store of tens of GiB: past StarPU 1.3's 2^32 − 1 vector elements it is one handle
  // of k-element groups, at least as long as asked and less than one group more.
  for (const std::size_t n : {std::size_t(1000), std::size_t(UINT32_MAX), std::size_t(UINT32_MAX) + 1,
                              std::size_t(11648000000), std::size_t(1) << 36}) {
    const graph::Data d = graph::shot_buffer(0, n, sizeof(float));
    const starpu_data_handle_t h = d;
    const std::size_t bytes = starpu_data_get_size(h);
    const std::size_t group = STARPU_VECTOR_GET_ELEMSIZE(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
    EXPECT_GE(bytes, n * sizeof(float)) << n;
    EXPECT_LT(bytes, n * sizeof(float) + group) << n;
    EXPECT_EQ(group % sizeof(float), 0u) << n;
    EXPECT_EQ(group == sizeof(float), n <= std::size_t(UINT32_MAX)) << n;
  }
}

}  // namespace
}  // namespace starwave::test
