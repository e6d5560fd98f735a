// kernels/cpu/store_slots.hpp — reading the store's slots in the CPU backward sweep (internal to
// kernels/cpu/adjoint.cpp): the runs of consecutive cells a slot holds, a 16-bit slot's values
// decoded, a ZFP slot's decoded once into a window of three, a slot restored into a field.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/zfp_slot.hpp"
#include "kernels/live_rows.hpp"
#include "kernels/pack16.hpp"
#include "kernels/shot.hpp"

#ifndef STARWAVE_CPU_LEVEL
#error "kernels/cpu/store_slots.hpp is for the per-level kernel files (kernels/cpu/levels.hpp)"
#endif

namespace starwave::cpu::STARWAVE_CPU_LEVEL {
namespace {

/// Calls f(grid offset, slot offset, count, z, y, x) for the runs of consecutive cells of a
/// store slot, (z, y, x) the first cell: each row piece of ShotProblem::store_blocks, in order.
template <typename T, typename F>
void for_slot_runs(const ShotProblem<T>& p, F&& f) {
  typename ShotProblem<T>::StoreBlock b[ShotProblem<T>::kMaxStoreBlocks];
  const int n = p.store_blocks(b);
  long k = 0;
  for (int i = 0; i < n; ++i)
    for (int z = b[i].z0; z < b[i].z1; ++z)
      for (int y = b[i].y0; y < b[i].y1; ++y, k += b[i].width)
        f(p.row_offset(z, y) + b[i].x0, k, long(b[i].width), z, y, b[i].x0);
}

/// Values [k, k + n) of a 16-bit store slot, decoded into `out` (pack16's runs where they apply).
template <typename T>
void decode_slot(const ShotProblem<T>& p, const T* slot, long k, long n, T* out) {
  const std::uint16_t* words = ShotProblem<T>::slot_words(slot) + k;
  const int s = pack16::scale_exponent(slot[0]), c = p.compression;
  if constexpr (std::is_same_v<T, float>) {
    if (pack16::runs_apply(slot[0], s, c)) {
      pack16::decode_run(words, out, n, s, c);
      return;
    }
  }
  for (long j = 0; j < n; ++j) out[j] = pack16::decode<T>(words[j], s, c);
}

/// Store slot m as the adjoint reads it: in the store (T or 16-bit words), or with a ZFP
/// store its values decoded into place m mod 3 of p.zfp_window(), once while the steps that
/// read it (m − 1, m, m + 1) run; `held` names the slot each place holds.
template <typename T>
const T* slot_for_reading(const ShotProblem<T>& p, int m, int* held) {
  if (pack16::zfp_rate(p.compression) == 0) return p.store + p.slot_offset(m);
  T* out = p.zfp_window() + std::size_t(m % 3) * p.zfp_values_size();
  if (held[m % 3] != m) {
    zfp_decode_slot(p, p.store + p.slot_offset(m), out);
    held[m % 3] = m;
  }
  return out;
}

/// `r` grown to hold the grid row nearest (z, y) — a guard plane's or row's values are read by
/// the grid rows beside it — if a store run of `n` values of a field at `v` holds anything but
/// +0; above the grid (a free surface's mirror planes, whose −0 is read only beside a grid
/// row's +0) anything but ±0.
template <typename T>
void grow_by_run(const ShotProblem<T>& p, const T* v, long n, int z, int y, live::Rows& r) {
  const int zg = std::clamp(z, 0, p.nz - 1), yg = std::clamp(y, 0, p.ny - 1);
  if (live::holds(r, zg, yg)) return;
  if (z < 0 ? live::any_value(v, int(n)) : live::any_bits(v, int(n))) live::add(r, zg, yg);
}

/// `r` grown to hold the rows of the store's cells (guard planes, rows and columns included)
/// where the field `u` (a grid allocation) holds anything but +0 (grow_by_run).
template <typename T>
live::Rows of_store_cells(const ShotProblem<T>& p, const T* u, live::Rows r = {}) {
  for_slot_runs(p, [&](long g, long, long n, int z, int y, int) { grow_by_run(p, u + p.origin() + g, n, z, y, r); });
  return r;
}

/// Store slot m written into the field `u` (a grid allocation) at the cells the store keeps.
/// With `grow`, it also takes the rows of the runs written (grow_by_run).
template <typename T>
void restore_slot(const ShotProblem<T>& p, T* u, int m, int* held, live::Rows* grow = nullptr) {
  T* uo = u + p.origin();
  const T* slot = slot_for_reading(p, m, held);
  const bool words = pack16::words16(p.compression);
  for_slot_runs(p, [&](long g, long k, long n, int z, int y, int) {
    if (words)
      decode_slot(p, slot, k, n, uo + g);
    else
      std::memcpy(uo + g, slot + k, std::size_t(n) * sizeof(T));
    if (grow) grow_by_run(p, uo + g, n, z, y, *grow);
  });
}

}  // namespace
}  // namespace starwave::cpu::STARWAVE_CPU_LEVEL
