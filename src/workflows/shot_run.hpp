// src/workflows/shot_run.hpp — what modeling and imaging set up alike before their first task
// (internal to src/workflows/): the time step, the padded medium in the run's precision, the
// shots' layout, the shots in flight within the memory room, each shot's sources and receivers
// on its rank, and the run's timing.
#pragma once

#include <string>

#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/room.hpp"
#include "src/memory/store_plan.hpp"
#include "src/model/model.hpp"
#include "src/model/survey.hpp"
#include "src/numerics/propagator.hpp"
#include "src/runtime/runtime.hpp"
#include "src/runtime/scratch.hpp"
#include "src/safety/signals.hpp"

namespace starwave {

template <typename T>
struct ShotRun {
  double start = graph::clock_seconds();
  TimeStepping time;
  double f0 = 0;          // the CPML's α frequency: --pml-frequency, else the first wavelet's dominant one
  Medium<T> medium;       // the padded grid and its coefficients, shared by every shot
  ShotProblem<T> layout;  // one shot's problem, its buffers unattached (nrec: the survey's)

  /// One shot's problem with its point counts, and on the shot's own rank its inputs (the
  /// source samples and point nodes, copied into its handles).
  struct Shot {
    ShotProblem<T> problem;
    ShotInputs<T> inputs;
  };
  Shot shot(const Model& m, const Survey& s, int k) const {
    Shot out{layout, {}};
    if (graph::mine(k, s.nshots())) out.inputs = shot_inputs(medium, m, s, time, k);
    point_counts(medium, m, s, k, out.inputs).apply(out.problem);  // the handles' sizes, on every rank
    return out;
  }

  double seconds() const { return graph::clock_seconds() - start; }
  /// Padded cells × internal steps × shots × propagations per shot.
  double cell_updates(int shots, int propagations) const {
    return double(propagations) * layout.nz * layout.ny * layout.nx * time.nsteps * shots;
  }
};

/// The set-up of a run of `s`'s shots over `m` (the time step chosen for `m`).
template <typename T>
ShotRun<T> set_up_shots(const Model& m, const Survey& s, const NumericalOptions& o) {
  ShotRun<T> r;
  r.time = choose_time_step(m, s, o);
  r.f0 = o.pml_frequency > 0 ? o.pml_frequency : dominant_frequency(s.wavelet(0), s.dt);
  r.medium = build_medium<T>(m, o, r.time, int(s.nt), r.f0);
  r.layout = r.medium.layout;
  r.layout.nrec = s.nrec();
  return r;
}

/// Whether the caller asked the run to stop (safety::request_interrupt, Python's Ctrl-C): the
/// shot loops start no new shot after the first. Alone only: ranks must agree on their shots.
inline bool interrupted() { return graph::size() == 1 && safety::interrupt_requested(); }
/// What a run stopped by interrupted() throws once its shots under way have finished.
inline Interrupted interruption() {
  return Interrupted("interrupted: the shots under way finished, the rest not started");
}

/// The run's room for shots, as the runtime has it: workers, GPUs, memory, scratch.
inline StoreRoom store_room() {
  StoreRoom room;
  room.cpus = graph::workers() - graph::cuda_workers();
  room.gpus = gpu_rooms();
  room.host = room_for_buffers();
  room.scratch = scratch::active();
  room.scratch_option = scratch::given();
  room.disk = scratch::disk_room();
  room.largest_piece = graph::kLargestDiskPiece;
  room.require_file_size = scratch::require_file_size;
  return room;
}

/// Shots in flight on this rank: `wanted`, fewer when the memory room is short; a run that
/// cannot hold one shot is refused before any work or handle, `hint` saying what helps.
inline int shots_in_window(const MemoryNeed& need, int wanted, const std::string& hint) {
  return shots_in_flight(need, graph::workers(), wanted, room_for_buffers(), "this run", hint);
}

}  // namespace starwave
