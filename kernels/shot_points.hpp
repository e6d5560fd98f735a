// kernels/shot_points.hpp — one shot's source and receivers as weighted grid nodes (their
// tables as raw pointers into the shot's nodes and signals buffers) and the functions that
// fill those buffers. Pure data: no StarPU, no I/O. Decided by the propagator
// (src/numerics/propagator.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/hd.hpp"

namespace starwave {

template <typename T>
struct ShotPoints {
  int nrec = 0;
  T* traces = nullptr;  // nrec × nt, row per receiver

  // The shot's points (docs/design.md §2): the source is injected at `nsrc` nodes with weights
  // (one node of weight 1 when it lies on a node; Hicks' windowed sinc otherwise), and
  // receiver r samples Σ_e w_e u[node_e] over its entries e, with the same kind of weights
  // (sampling is the transpose of injection). The integers live in the shot's nodes buffer:
  //   [source_node (nsrc) | source_row (rows + 1) | rec_entries (nrec + 1) |
  //    entry_node (nent) | entry_receiver (nent) | rec_row (rows + 1) | rec_cell (≤ nent) |
  //    rec_first (≤ nent + 1) | rec_order (nent)]   (fill_nodes()),
  // the weights in its signals buffer after the source samples:
  //   [source (nsteps) | source_weight (nsrc) | entry_weight (nent)]   (fill_weights()).
  int nsrc = 0;                          // source nodes: distinct, ascending
  int nent = 0;                          // receiver entries, receiver by receiver
  const T* source = nullptr;             // s[m]·δ_h for m = 0 … nsteps−1 (already divided by the cell volume)
  const T* source_weight = nullptr;      // nsrc
  const T* entry_weight = nullptr;       // nent
  const long* source_node = nullptr;     // nsrc grid offsets
  const long* source_row = nullptr;      // the source nodes of padded row r: [source_row[r], source_row[r+1])
  const long* rec_entries = nullptr;     // receiver r's entries: [rec_entries[r], rec_entries[r+1])
  const long* entry_node = nullptr;      // nent grid offsets
  const long* entry_receiver = nullptr;  // nent receivers
  // The entries as a gather, for the kernels that add every receiver's adjoint source in
  // the thread that updates its cell (in entry order, without atomics; entries of several
  // receivers may share a cell): the unique entry cells ascending, those of padded row
  // r = z·ny + y at rec_cell[rec_row[r] … rec_row[r+1]), the entries of cell c at
  // rec_order[rec_first[c] … rec_first[c+1]).
  const long* rec_row = nullptr;
  const long* rec_cell = nullptr;
  const long* rec_first = nullptr;
  const long* rec_order = nullptr;

  /// Elements of the nodes buffer for a shot's points on a padded grid of `rows` rows.
  SW_HD static std::size_t nodes_size(int nsrc, int nrec, int nent, int rows) {
    return std::size_t(nsrc) + 2 * std::size_t(rows) + std::size_t(nrec) + 5 * std::size_t(nent) + 4;
  }
  /// The source node at grid offset i of padded row r (= z·ny + y): its number j < nsrc, or −1.
  SW_HD int source_at(long i, int r) const {
    for (long j = source_row[r]; j < source_row[r + 1]; ++j)
      if (source_node[j] == i) return int(j);
    return -1;
  }
  /// Receiver r's sample of field u (pointer at cell (0, 0, 0)): Σ_e w_e u[node_e] in entry
  /// order, the sum starting from the first term (0 for a receiver without entries).
  SW_HD T sample(const T* u, int r) const {
    const long e0 = rec_entries[r], e1 = rec_entries[r + 1];
    if (e0 == e1) return T(0);
    T acc = entry_weight[e0] * u[entry_node[e0]];
    for (long e = e0 + 1; e < e1; ++e) acc += entry_weight[e] * u[entry_node[e]];
    return acc;
  }
};

/// A point as weighted nodes (grid offsets from cell (0, 0, 0)), built by the propagator.
struct PointNodes {
  std::vector<long> node;
  std::vector<double> weight;
};

/// Fills a nodes buffer of ShotProblem::nodes_size() elements from the source's nodes
/// (distinct, ascending) and each receiver's (distinct), on a padded grid whose row
/// r = z·ny + y starts at offset row_start(r), ascending in r. Returns nent.
template <typename RowStart>
long fill_nodes(long* nodes, const PointNodes& source, const std::vector<PointNodes>& receivers, int rows,
                RowStart&& row_start) {
  const long nsrc = long(source.node.size()), nrec = long(receivers.size());
  long nent = 0;
  for (const auto& r : receivers) nent += long(r.node.size());
  long* src = nodes;
  long* src_row = src + nsrc;
  long* entries = src_row + rows + 1;
  long* ent_node = entries + nrec + 1;
  long* ent_rec = ent_node + nent;
  long* row = ent_rec + nent;
  long* cell = row + rows + 1;
  long* first = cell + nent;
  long* order = first + nent + 1;
  for (long j = 0; j < nsrc; ++j) src[j] = source.node[std::size_t(j)];
  for (int r = 0; r < rows; ++r) src_row[r] = std::lower_bound(src, src + nsrc, row_start(r)) - src;
  src_row[rows] = nsrc;
  long e = 0;
  for (long r = 0; r < nrec; ++r) {
    entries[r] = e;
    for (long n : receivers[std::size_t(r)].node) {
      ent_node[e] = n;
      ent_rec[e++] = r;
    }
  }
  entries[nrec] = e;
  std::vector<long> by_cell(static_cast<std::size_t>(nent));
  for (long k = 0; k < nent; ++k) by_cell[std::size_t(k)] = k;
  std::stable_sort(by_cell.begin(), by_cell.end(), [&](long a, long b) { return ent_node[a] < ent_node[b]; });
  long ncell = 0;
  for (long k = 0; k < nent; ++k) {
    const long en = by_cell[std::size_t(k)];
    if (k == 0 || ent_node[en] != cell[ncell - 1]) {
      cell[ncell] = ent_node[en];
      first[ncell] = k;
      ++ncell;
    }
    order[k] = en;
  }
  first[ncell] = nent;
  for (long c = ncell + 1; c <= nent; ++c) first[c] = nent;  // unused tail
  for (long c = ncell; c < nent; ++c) cell[c] = -1;
  for (int r = 0; r < rows; ++r) row[r] = std::lower_bound(cell, cell + ncell, row_start(r)) - cell;
  row[rows] = ncell;
  return nent;
}

/// Writes the points' weights, in precision T, after the source samples of a signals buffer.
template <typename T>
void fill_weights(T* signals, int nsteps, const PointNodes& source, const std::vector<PointNodes>& receivers) {
  T* w = signals + nsteps;
  for (double v : source.weight) *w++ = T(v);
  for (const auto& r : receivers)
    for (double v : r.weight) *w++ = T(v);
}

}  // namespace starwave
