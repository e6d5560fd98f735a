// kernels/cpu/zfp_slot.hpp — a ZFP store slot (--store-compression zfp16|zfp12|zfp8,
// docs/design.md §3): each store block, an array of its extents longer than one (x
// fastest), compressed by Debian's libzfp at the store's fixed rate into a stream of exactly
// ShotProblem::zfp_block_bytes(). ZFP codes blocks of 4^d neighbouring values, where fp16
// rounds each value alone: at the same bytes the gradient's error is an order of magnitude
// smaller (docs/benchmarks.md). The CPU's alone: a ZFP store's shots run on CPU workers.
#pragma once

#include "kernels/shot.hpp"

namespace starwave::cpu {

/// Writes slot `slot` (ShotProblem::slot_size() values) from `values`, the slot's
/// store_step_size() values in store order: a zero header, then the blocks' streams.
template <typename T>
void zfp_encode_slot(const ShotProblem<T>& p, const T* values, T* slot);
/// The slot's store_step_size() values, decoded into `values`.
template <typename T>
void zfp_decode_slot(const ShotProblem<T>& p, const T* slot, T* values);
/// The bytes ZFP's stream of store block `b` takes (the tests check zfp_block_bytes()).
template <typename T>
long zfp_stream_bytes(const ShotProblem<T>& p, const typename ShotProblem<T>::StoreBlock& b, const T* values);

}  // namespace starwave::cpu
