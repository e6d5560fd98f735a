// tests/test_store_plan.cpp — which store the memory plan gives a shot (src/memory/store_plan.hpp):
// the whole store where one shot fits, else out of core with scratch, else checkpoints at the
// interval of least memory; what the options ask is kept; and the refusals that name the
// option at fault.
#include <gtest/gtest.h>

#include <string>

#include "src/base/error.hpp"
#include "src/memory/store_plan.hpp"

namespace starwave {
namespace {

/// A 2-D shot: 60 × 80 padded cells, radius 4, layers of 10, 400 steps.
ShotProblem<float> shot() {
  ShotProblem<float> p;
  p.set_grid(60, 1, 80, 4, 2);
  p.pml_top = p.pml_bottom = p.pml_left = p.pml_right = 10;
  p.nsteps = 400;
  return p;
}

/// A CPU-only run with `bytes` of main memory for its buffers and a large scratch disk (used
/// only when `scratch`).
StoreRoom cpu_room(std::uint64_t bytes, bool scratch = false) {
  StoreRoom r;
  r.cpus = 2;
  r.host = {bytes, "this machine has available"};
  r.scratch = scratch;
  r.scratch_option = "--scratch scr";
  r.disk = {std::uint64_t(1) << 40, "StarPU may use there"};
  r.largest_piece = std::uint64_t(1) << 30;
  return r;
}

ShotProblem<float> with(ShotProblem<float> p, const StorePlan& s) {
  static_cast<StorePlan&>(p) = s;
  return p;
}

TEST(StorePlan, TheWholeStoreWhereAShotFitsElseOutOfCoreElseCheckpoints) {
  const ShotProblem<float> p = shot();
  const StoreRequest ask;  // --checkpoint-every chosen by the plan
  const ShotHoldings h{1000, 2000, false};
  const std::uint64_t one_shot = shot_need(p, h).total(2, 1);  // the whole store in memory

  const StorePlan whole = choose_store(p, ask, h, cpu_room(one_shot));
  EXPECT_EQ(whole.checkpoint_every, 0);
  EXPECT_FALSE(whole.split_store);

  const StorePlan ring = choose_store(p, ask, h, cpu_room(one_shot - 1));
  EXPECT_FALSE(ring.split_store);
  EXPECT_EQ(ring.checkpoint_every, checkpoint_interval(p.nsteps, sizeof(float) * std::uint64_t(p.slot_size()),
                                                       sizeof(float) * std::uint64_t(p.checkpoint_size())));
  EXPECT_GT(ring.checkpoint_every, 0);
  EXPECT_LT(shot_need(with(p, ring), h).store, shot_need(p, h).store) << "checkpoints hold less than the whole store";

  const StoreRoom scratch = cpu_room(one_shot - 1, true);
  ShotProblem<float> split = with(p, choose_store(p, ask, h, scratch));
  EXPECT_TRUE(split.split_store);
  split_intervals(split, scratch);
  EXPECT_EQ(split.checkpoint_every, (p.nsteps + 31) / 32) << "an interval is a 32nd of the steps";
  const MemoryNeed out = shot_need(split, h);
  EXPECT_EQ(out.intervals, split.intervals());
  EXPECT_EQ(out.scratch, sizeof(float) * std::uint64_t(split.intervals()) * split.store_size());
}

TEST(StorePlan, WhatTheOptionsAskIsKept) {
  const ShotProblem<float> p = shot();
  const ShotHoldings h{};
  StoreRequest full;
  full.storage = StorePlan::kStoreFull;  // the whole field is its point: no checkpoints without scratch
  const StorePlan kept = choose_store(p, full, h, cpu_room(1));
  EXPECT_EQ(kept.checkpoint_every, 0);
  EXPECT_EQ(kept.storage, StorePlan::kStoreFull);
  StoreRequest every;
  every.checkpoint_every = 25;
  every.compression = pack16::kHalf;
  const StorePlan ring = choose_store(p, every, h, cpu_room(std::uint64_t(1) << 40));
  EXPECT_EQ(ring.checkpoint_every, 25);
  EXPECT_FALSE(ring.split_store);
  EXPECT_EQ(ring.compression, pack16::kHalf);
  const StorePlan split = choose_store(p, every, h, cpu_room(std::uint64_t(1) << 40, true));
  EXPECT_TRUE(split.split_store) << "an interval asked with scratch: out of core";
  EXPECT_EQ(split.checkpoint_every, 25);
}

TEST(StorePlan, RefusalsNameTheOptionAtFault) {
  const ShotProblem<float> p = shot();
  const ShotHoldings h{};
  StoreRequest zfp;
  zfp.compression = pack16::kZfp16;
  StoreRoom none = cpu_room(std::uint64_t(1) << 40);
  none.cpus = 0;
  try {
    choose_store(p, zfp, h, none);
    FAIL() << "a ZFP store without CPU workers";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--store-compression zfp16"), std::string::npos) << e.what();
  }

  StoreRoom small = cpu_room(std::uint64_t(1) << 40, true);
  ShotProblem<float> q = p;
  q.split_store = true;
  q.checkpoint_every = 200;
  small.largest_piece = std::uint64_t(sizeof(float)) * q.store_size() - 1;  // one interval too large to move
  try {
    split_intervals(q, small);
    FAIL() << "an interval StarPU cannot move in one piece";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--checkpoint-every 200: an interval of the store would take", 0), 0)
        << e.what();
  }

  StoreRoom disk = cpu_room(std::uint64_t(1) << 40, true);
  q.checkpoint_every = 25;
  const MemoryNeed need = shot_need(q, h);
  disk.disk.bytes = need.scratch - 1;  // not one shot's intervals
  try {
    place_store_shots(q, need, disk);
    FAIL() << "a shot's store larger than the scratch disk";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--scratch scr: a shot's store takes", 0), 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("StarPU may use there"), std::string::npos) << e.what();
  }
  disk.disk.bytes = need.scratch + 1;
  EXPECT_EQ(place_store_shots(q, need, disk).shots, 1) << "no more shots than the disk holds";
  disk.disk.bytes = std::uint64_t(1) << 40;
  EXPECT_EQ(place_store_shots(q, need, disk).shots, 2) << "one shot per CPU worker";
}

}  // namespace
}  // namespace starwave
