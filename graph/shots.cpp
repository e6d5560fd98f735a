#include "graph/shots.hpp"

namespace starwave::graph {

template <typename T>
ForwardShot forward_shot(int owner, const ShotProblem<T>& p, const ShotReads<T>& reads) {
  ForwardShot d;
  d.nodes = input_vector(owner, reads.nodes, p.nodes_size(), sizeof(long));
  d.signals = input_vector(owner, reads.signals, p.signals_size(), sizeof(T));
  d.traces = owned_vector(owner, nullptr, std::size_t(p.nrec) * std::size_t(p.nt), sizeof(T));
  return d;
}

template <typename T>
ImagingShot imaging_shot(int owner, const ShotProblem<T>& p, const ShotReads<T>& reads, double* misfit,
                         bool reference) {
  const std::size_t traces = std::size_t(p.nrec) * std::size_t(p.nt);
  const std::size_t region = std::size_t(p.model_cells());
  ImagingShot d;  // registered in this order on every rank (the MPI tags follow it)
  d.nodes = input_vector(owner, reads.nodes, p.nodes_size(), sizeof(long));
  d.signals = input_vector(owner, reads.signals, p.signals_size(), sizeof(T));
  d.traces = owned_vector(owner, nullptr, traces, sizeof(T));
  if (p.split_store)
    for (int j = 0; j < p.intervals(); ++j) d.intervals.push_back(shot_buffer(owner, p.store_size(), sizeof(T)));
  else
    d.store = shot_buffer(owner, p.store_size(), sizeof(T));
  d.final_state = shot_buffer(owner, 2 * p.grid_size(), sizeof(T));
  d.observed = input_vector(owner, reads.observed, (reads.split_observed ? 2 : 1) * traces, sizeof(float));
  d.weights = input_vector(owner, reads.weights, std::size_t(p.nrec) * (reads.windowed ? 4 : 1), sizeof(float));
  d.residual = owned_vector(owner, nullptr, traces, sizeof(T));
  d.misfit = owned_vector(owner, misfit, 1, sizeof(double));
  d.correlation = owned_vector(owner, nullptr, region, sizeof(T));
  const std::size_t sums = std::size_t(p.illumination_sums());
  d.illumination = owned_vector(owner, nullptr, sums * region, sizeof(T));
  d.contribution = owned_vector(owner, nullptr, (1 + sums) * region, sizeof(T));
  if (reference) d.reference = owned_vector(owner, nullptr, traces, sizeof(T));
  if (p.checkpoints_size() > 0) d.checkpoints = shot_buffer(owner, p.checkpoints_size(), sizeof(T));
  if (p.split_store) {
    d.forward_work = shot_buffer(owner, p.work_size(), sizeof(T));
    d.adjoint_work = shot_buffer(owner, p.adjoint_work_size(), sizeof(T));
  }
  return d;
}

template ForwardShot forward_shot<float>(int, const ShotProblem<float>&, const ShotReads<float>&);
template ForwardShot forward_shot<double>(int, const ShotProblem<double>&, const ShotReads<double>&);
template ImagingShot imaging_shot<float>(int, const ShotProblem<float>&, const ShotReads<float>&, double*, bool);
template ImagingShot imaging_shot<double>(int, const ShotProblem<double>&, const ShotReads<double>&, double*, bool);

}  // namespace starwave::graph
