// kernels/shot_plan.hpp — what a run decides of a shot beside its grid and points: the store
// plan (what the forward keeps for the adjoint, in which words, at which intervals: the
// memory plan decides, src/memory/plan.hpp) and the run's tuning knobs (the runtime
// sets them; the bits never depend on them). Pure data: no StarPU, no I/O.
#pragma once

#include "kernels/pack16.hpp"

namespace starwave {

struct StorePlan {
  // The forward wavefield kept for the adjoint (docs/design.md §3), written by the forward when
  // `store` is set, every step (store_blocks()): kStoreBoundary, the field outside the model
  // region (the adjoint re-creates the region backwards from its shell, and takes the
  // layers' share of the gradient from the rest); kStoreFull, the whole field; kStoreShell,
  // the shell alone (the gradient then holds the layers' velocity fixed: not exact at the
  // model's edges); and the last two states.
  static constexpr int kStoreBoundary = 0, kStoreFull = 1, kStoreShell = 2;
  int storage = kStoreBoundary;
  // With compression (pack16::kHalf, kBfloat) a slot is its largest magnitude (one T, in a
  // 64-byte header), then its store_step_size() values as 16-bit words (slot_words()),
  // zeros to the next 64 bytes; with ZFP (pack16::zfp_rate) a 64-byte header of zeros, then
  // each store block's ZFP stream (zfp_block_bytes()); kNone: the values as T.
  int compression = pack16::kNone;

  // Checkpointing (docs/design.md §3): with checkpoint_every = L > 0 the store is a ring of
  // L + 2 slots, and the forward keeps its whole state (u, u_prev, the CPML memory
  // variables) after step jL − 1 for j = 1 … intervals() − 1 in `checkpoints`. The backward
  // sweep runs interval j (steps [jL, min(N, (j+1)L)), last first) on slots jL − 1 …
  // min(N, (j+1)L): the forward leaves the last interval's in the ring; each earlier one is
  // re-run from checkpoint j (j = 0: from rest). The same operations in the same order as
  // with every slot kept: the same bits, for at most one more forward run.
  int checkpoint_every = 0;
  // A split store (docs/design.md §3): with split_store and checkpoint_every = L, every slot
  // is kept, in intervals() buffers of store_slots() slots, one StarPU handle each (which
  // StarPU may move out of core): interval j's buffer holds slots jL − 1 … min(N, (j+1)L)
  // (from 0 for j = 0), every slot the backward sweep over steps [jL, (j+1)L) reads, so a
  // slot at an interval's edge is kept twice. `store` then points at the buffer of interval
  // `store_interval`, and the forward and adjoint run that interval alone
  // (interval_begin(), interval_end()); no checkpoints, no re-runs.
  bool split_store = false;
  int store_interval = 0;
};

/// The --storage word of a StorePlan::kStore* value: boundary, full or shell (the default:
/// boundary, what a gradient keeps).
inline const char* storage_name(int storage) {
  return storage == StorePlan::kStoreFull ? "full" : storage == StorePlan::kStoreShell ? "shell" : "boundary";
}

/// The --store-compression word of a pack16::k* value: none, fp16, bf16, zfp16, zfp12 or zfp8.
inline const char* compression_name(int compression) {
  switch (compression) {
    case pack16::kHalf:
      return "fp16";
    case pack16::kBfloat:
      return "bf16";
    case pack16::kZfp16:
      return "zfp16";
    case pack16::kZfp12:
      return "zfp12";
    case pack16::kZfp8:
      return "zfp8";
    default:
      return "none";
  }
}

/// What the adjoint sums beside its correlation Σ μ[m+1] (L u[m] + f[m]) and the source
/// illumination Σ u[m]² (RTM's choices, docs/imaging.md; a gradient asks for neither):
///   receiver_illumination — also Σ μ[m+1]², the illumination buffer then holding
///                           [Σ u² | Σ μ²] (2 × the model region);
///   isic                  — the correlation adds ∇u[m]·∇μ[m+1] (stencil::gradient_dot), for
///                           the inverse-scattering imaging condition.
struct ImageSums {
  bool receiver_illumination = false;
  bool isic = false;
  /// Model-region arrays the illumination buffer holds.
  SW_HD int illumination_sums() const { return receiver_illumination ? 2 : 1; }
};

struct RunTuning {
  // 3-D CPU sweeps run over tiles of this many rows in y, each down all the planes, so the
  // planes a stencil reads stay in the core's cache; 0: sized from tile_bytes (the bits are
  // the same whatever the tiles: only the order of independent cell updates changes).
  int tile_rows = 0;
  // The CUDA u and μ launches give each interior thread a column (y, x) and a run of this
  // many planes, swept downwards (kernels/cuda/launch.hpp, InteriorRuns); 0: the launches'
  // default (the bits are the same whatever the runs: each cell's operations are
  // unchanged, only which thread does them).
  int column_planes = 0;
  // > 0: the 3-D u and μ launches on a GPU as tiles marching down z (kernels/cuda/march.hpp),
  // a block taking this many planes; ≤ 0: the interior runs above and the layer cells one a
  // thread (the default: faster on the devices measured, docs/gpu.md). The same bits either way.
  int march_planes = 0;
  // When set, the CPU forward, J and adjoint add to it the rows (z, y) each step sweeps (of u,
  // of u and δu, of μ): the rows at rest are skipped (kernels/live_rows.hpp). Tests and
  // benchmarks read it; kernels only add.
  long long* swept_rows = nullptr;
  // When set, the CPU adjoint adds to it the rows (z, y) within reach of the re-created
  // forward field's rows not at rest, each step: the model rows among them are re-created and
  // imaged in full, the others hold u at rest (+0) and take μ·∇²(+0) alone.
  long long* imaged_rows = nullptr;
  // The CPU forward, J and adjoint sweep every row of every step (the same bits: the tests'
  // and benchmarks' reference).
  bool every_row = false;
};

}  // namespace starwave
