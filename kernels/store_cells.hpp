// kernels/store_cells.hpp — a store slot's elements mapped to their cells and read back
// (decoded when the store is 16-bit) by one CUDA thread each (kernels/cuda/bodies.hpp).
#pragma once

#include "kernels/divisor.hpp"
#include "kernels/shot.hpp"

namespace starwave {

/// Store slot elements → cells, as ShotProblem::store_point() computes them, with the
/// blocks and their divisors fixed once on the host: a CUDA thread per store element
/// (kernels/cuda/bodies.hpp) then finds its cell with compares, two multiply-shifts and no
/// integer division (store_point() costs ~300 instructions an element on a GPU).
struct StoreCells {
  static constexpr int kMax = 6;
  int n = 0;
  unsigned first[kMax + 1] = {};  // block i holds elements [first[i], first[i + 1])
  int z0[kMax] = {}, y0[kMax] = {}, x0[kMax] = {}, rows[kMax] = {};
  Divisor by_width[kMax], by_rows[kMax];
  long ystep = 0, zstep = 0;  // row_offset(z, y) = z·zstep + y·ystep
  int slots = 1;              // ShotProblem::store_slots()
  int base = 0;               // ShotProblem::store_base()
  long stride = 0;            // ShotProblem::slot_size()
  int compression = pack16::kNone;

  template <typename T>
  static StoreCells of(const ShotProblem<T>& p) {
    static_assert(ShotProblem<T>::kMaxStoreBlocks == kMax, "one block table");
    typename ShotProblem<T>::StoreBlock b[kMax];
    StoreCells c;
    c.n = p.store_blocks(b);
    for (int i = 0; i < c.n; ++i) {
      c.first[i + 1] = c.first[i] + unsigned(b[i].size());
      c.z0[i] = b[i].z0;
      c.y0[i] = b[i].y0;
      c.x0[i] = b[i].x0;
      c.rows[i] = b[i].y1 - b[i].y0;
      c.by_width[i] = Divisor(unsigned(b[i].width));
      c.by_rows[i] = Divisor(unsigned(c.rows[i]));
    }
    c.slots = p.store_slots();
    c.base = p.store_base();
    c.stride = p.slot_size();
    c.compression = p.compression;
    c.zstep = long(p.plane);
    c.ystep = long(p.stride);
    return c;
  }
  /// Cell (z, y, x) of slot element k (k < first[n]).
  SW_HD void point(long k, int& z, int& y, int& x) const {
    const unsigned e = unsigned(k);
    int i = 0;
    while (i + 1 < n && e >= first[i + 1]) ++i;
    const unsigned c = e - first[i], row = by_width[i].div(c);
    x = x0[i] + int(c - row * by_width[i].d);
    z = z0[i] + int(rows[i] == 1 ? row : by_rows[i].div(row));
    y = y0[i] + int(rows[i] == 1 ? 0 : by_rows[i].mod(row));
  }
  /// Offset of store slot m (0 ≤ m ≤ nsteps): ShotProblem::slot_offset(m).
  SW_HD long offset(int m) const {
    const int k = m - base;
    return long(k < slots ? k : k % slots) * stride;
  }
  /// Element k of store slot m, decoded.
  template <typename T>
  SW_HD T load(const T* store, int m, long k) const {
    const T* slot = store + offset(m);
    if (compression == pack16::kNone) return slot[k];
    return pack16::decode<T>(ShotProblem<T>::slot_words(slot)[k], pack16::scale_exponent(slot[0]), compression);
  }
  /// Grid offset (from cell (0, 0, 0)) of slot element k: ShotProblem::store_cell(k).
  SW_HD long cell(long k) const {
    int z, y, x;
    point(k, z, y, x);
    return long(z) * zstep + long(y) * ystep + x;
  }
};

}  // namespace starwave
