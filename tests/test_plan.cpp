// tests/test_plan.cpp — where the memory plan puts a run's shots when it has GPUs: each
// GPU holds the shots it runs (their stores live there), main memory the CPU workers'
// shots and what every shot brings home; a kind of worker where one shot does not fit
// takes none (src/memory/plan.hpp, place_shots).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/memory/plan.hpp"

namespace starwave {
namespace {

memory::MemoryRoom room(std::uint64_t bytes) { return {bytes, "this machine has available"}; }
GpuRoom gpu(std::uint64_t bytes, int workers) { return {{bytes, "GPU 0 has free"}, workers}; }

// The run shares 100 B, a worker's scratch is 10 B, a shot 50 B of which 40 B of store: a
// GPU shot brings 10 B home.
MemoryNeed need() {
  MemoryNeed n;
  n.shared = 100;
  n.per_worker = 10;
  n.per_shot = 50;
  n.store = 40;
  return n;
}

TEST(Plan, SizesAreWrittenWithoutExponents) {
  // The plan line's sizes: three significant digits in the largest unit that leaves one to
  // three before the point ("1.02e+03 MiB" is how %.3g writes 1020 MiB).
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(bytes_text(1020.0 * 1024 * 1024), "0.996 GiB");
  EXPECT_EQ(bytes_text(999.0 * 1024 * 1024), "999 MiB");
  EXPECT_EQ(bytes_text(1000.0 * 1024), "0.977 MiB");
  // Two sizes a message compares keep the digits that tell them apart.
  const auto [store, room] = bytes_text_apart(36.2 * 1024 * 1024, 36.04 * 1024 * 1024);
  EXPECT_EQ(store, "36.2 MiB");
  EXPECT_EQ(room, "36 MiB");
  const auto [a, b] = bytes_text_apart(36.004 * 1024 * 1024, 35.996 * 1024 * 1024);
  EXPECT_EQ(a, "36.004 MiB");
  EXPECT_EQ(b, "35.996 MiB");
  EXPECT_EQ(bytes_text_apart(512, 512).first, "512 B");
}

TEST(Plan, WithoutGpusTheCpuWorkersHoldTheWindowAsBefore) {
  for (std::uint64_t bytes : {1000ull, 230ull, 170ull}) {
    const ShotPlacement p = place_shots(need(), 2, room(bytes), {}, "this run", "hint");
    EXPECT_EQ(p.total(), shots_in_flight(need(), 2, 2, room(bytes), "this run", "hint")) << bytes;
    EXPECT_TRUE(p.gpu.empty());
    EXPECT_TRUE(p.cpu_takes_shots);
  }
  EXPECT_THROW(place_shots(need(), 2, room(169), {}, "this run", "hint"), InputError);
}

TEST(Plan, AGpuHoldsTwoShotsPerCudaWorkerOrWhatFits) {
  // 8 CUDA workers: 100 + 80 beside the shots; 16 shots of 50 B take 800 B.
  ShotPlacement p = place_shots(need(), 4, room(10000), {gpu(980, 8)}, "this run", "hint");
  EXPECT_EQ(p.gpu, std::vector<int>{16});
  EXPECT_EQ(p.cpu, 4);  // one a CPU worker, beside the GPU shots' 160 B brought home
  EXPECT_EQ(p.total(), 20);
  p = place_shots(need(), 4, room(10000), {gpu(979, 8)}, "this run", "hint");
  EXPECT_EQ(p.gpu, std::vector<int>{15});
  p = place_shots(need(), 0, room(10000), {gpu(330, 8)}, "this run", "hint");
  EXPECT_EQ(p.gpu, std::vector<int>{3});
  EXPECT_EQ(p.total(), 3);
  // Two GPUs, each by its own room and workers.
  p = place_shots(need(), 0, room(10000), {gpu(230, 1), gpu(5000, 4)}, "this run", "hint");
  EXPECT_EQ(p.gpu, (std::vector<int>{2, 8}));
  // Shot batches of 3 (MemoryNeed::batch): two batches a CUDA worker, or what fits; without
  // GPUs, the CPU workers' window times the batch.
  MemoryNeed batched = need();
  batched.batch = 3;
  p = place_shots(batched, 0, room(10000), {gpu(230, 1), gpu(5000, 4)}, "this run", "hint");
  EXPECT_EQ(p.gpu, (std::vector<int>{2, 24}));
  EXPECT_EQ(place_shots(batched, 0, room(10000), {gpu(10000, 1)}, "this run", "hint").gpu, std::vector<int>{6});
  EXPECT_EQ(place_shots(batched, 2, room(10000), {}, "this run", "hint").total(), 6);
  // The batch a placement holds: a batch a CUDA worker on every GPU that takes shots, two in
  // the window.
  const std::vector<GpuRoom> gpus{gpu(230, 1), gpu(5000, 4)};
  EXPECT_EQ(batch_held(place_shots(batched, 0, room(10000), gpus, "this run", "hint"), gpus, 3), 2);
  EXPECT_EQ(batch_held(place_shots(batched, 0, room(10000), {gpus[1]}, "this run", "hint"), {gpus[1]}, 3), 3);
  EXPECT_EQ(batch_held(place_shots(batched, 0, room(10000), {gpu(330, 8)}, "this run", "hint"), {gpu(330, 8)}, 3), 1);
  EXPECT_EQ(batch_held(place_shots(batched, 2, room(10000), {}, "this run", "hint"), {}, 3), 3);
  EXPECT_EQ(batch_held(place_shots(batched, 2, room(260), {}, "this run", "hint"), {}, 3), 1);
}

TEST(Plan, TheCpuWorkersTakeNoShotWhereOneDoesNotFitMainMemory) {
  // Main memory (StarPU's count, say) holds the run and the GPU shots' home parts, not a
  // CPU shot beside them: the GPU alone takes shots, and the plan says why.
  const ShotPlacement p = place_shots(need(), 8, room(300), {gpu(10000, 8)}, "this run", "hint");
  EXPECT_EQ(p.gpu, std::vector<int>{16});
  EXPECT_EQ(p.cpu, 0);
  EXPECT_FALSE(p.cpu_takes_shots);
  EXPECT_TRUE(p.gpus_take_shots);
  EXPECT_NE(p.left_out.find("main memory, more than the 300 B this machine has available"), std::string::npos)
      << p.left_out;
  const std::string text = plan_text(need(), 1000, p, 40);
  EXPECT_NE(text.find("; 16 shots in flight (at most 16 on the GPU, none on the 8 CPU workers: one shot beside"),
            std::string::npos)
      << text;
  EXPECT_NE(plan_text(need(), 1000, p, 3).find("; 3 shots in flight (at most 16 on the GPU"), std::string::npos);
  // Main memory short even of the GPU shots' home parts: fewer GPU shots (100 + 2 × 10).
  EXPECT_EQ(place_shots(need(), 0, room(120), {gpu(10000, 8)}, "this run", "hint").gpu, std::vector<int>{2});
  EXPECT_THROW(place_shots(need(), 0, room(105), {gpu(10000, 8)}, "this run", "hint"), InputError);
}

TEST(Plan, TheGpusTakeNoShotWhereOneFitsNone) {
  const ShotPlacement p = place_shots(need(), 2, room(1000), {gpu(229, 8)}, "this run", "hint");
  EXPECT_FALSE(p.gpus_take_shots);
  EXPECT_EQ(p.gpu, std::vector<int>{0});
  EXPECT_EQ(p.cpu, 2);
  EXPECT_NE(p.left_out.find("one shot needs 230 B on a GPU, more than the 229 B GPU 0 has free"), std::string::npos)
      << p.left_out;
  EXPECT_NE(plan_text(need(), 1000, p, 40).find("(at most none on the GPU, 2 on the CPU workers: one shot needs"),
            std::string::npos)
      << plan_text(need(), 1000, p, 40);
}

TEST(Plan, AShotThatFitsNowhereIsRefusedNamingBothMemories) {
  try {
    place_shots(need(), 2, room(169), {gpu(229, 8)}, "this run", "a smaller model");
    ADD_FAILURE() << "a shot that fits nowhere was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("this run needs 230 B on a GPU at least: one shot in flight takes 50 B (the stored forward "
                     "wavefield 40 B), each of its 8 CUDA workers 10 B, and the run 100 B; more than the 229 B GPU 0 "
                     "has free, and 170 B in main memory, more than the 169 B this machine has available "
                     "(a smaller model)"),
              std::string::npos)
        << m;
  }
}

TEST(Plan, CheckpointsAreChosenByWhetherAShotFitsWhereShotsRun) {
  // With a GPU, its room decides (a GPU shot is ~100 a CPU core's); without, main memory.
  EXPECT_TRUE(fits_one_shot(need(), 2, room(10), {gpu(230, 8)}));
  EXPECT_FALSE(fits_one_shot(need(), 2, room(10000), {gpu(229, 8)}));
  EXPECT_TRUE(fits_one_shot(need(), 2, room(10000), {gpu(229, 8), gpu(230, 8)}));
  EXPECT_TRUE(fits_one_shot(need(), 2, room(170), {}));
  EXPECT_FALSE(fits_one_shot(need(), 2, room(169), {}));
}

}  // namespace
}  // namespace starwave
