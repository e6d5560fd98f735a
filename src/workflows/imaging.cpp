// src/workflows/imaging.cpp — the gradient and RTM algorithm on the task graph of DESIGN
// §3. Per shot:
//     forward_keep(s) → misfit(s) → adjoint(s) → image(s)
// then the contributions are summed by a fixed binary tree over shot index (built as a
// binary counter while shots are submitted), so the result has the same bits whatever
// ran where. At most 2 × workers shots are in flight; each shot's handles are released
// after their last task.
#include "src/workflows/imaging.hpp"

#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "codelets/adjoint.hpp"
#include "codelets/distribution.hpp"
#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "codelets/image.hpp"
#include "codelets/misfit.hpp"
#include "codelets/step.hpp"
#include "kernels/imaging.hpp"
#include "src/error.hpp"
#include "src/files.hpp"
#include "src/runtime.hpp"
#include "src/workflows/memory.hpp"
#include "src/workflows/modeling.hpp"

namespace starwave {
namespace {

/// The shots of one evaluation, ascending: the hooks' mini-batch, or every shot.
std::vector<int> evaluation_shots(const Survey& s, const GradientHooks& hooks) {
  std::vector<int> shots = hooks.shots;
  if (shots.empty())
    for (int k = 0; k < s.nshots(); ++k) shots.push_back(k);
  for (int k : shots)
    if (k < 0 || k >= s.nshots()) throw RuntimeError("imaging: no shot " + std::to_string(k) + " in the survey");
  return shots;
}

/// Which of this rank's shots have run their last task; the submitting thread waits on a
/// given one (they finish in any order). Shots are counted by their place in the
/// evaluation.
class Completion {
 public:
  struct Ticket {
    Completion* owner;
    int index;
  };
  Completion(int count, int local, std::function<void(int, int)> progress)
      : done_(std::size_t(count), false), local_(local), progress_(std::move(progress)) {
    for (int i = 0; i < count; ++i) tickets_.push_back({this, i});
  }
  void* ticket(int index) { return &tickets_[std::size_t(index)]; }
  /// The StarPU callback. It notifies under the lock: StarPU releases a task's data
  /// before running its callback, so the submitting thread may be about to destroy this
  /// object, which it does only after wait_for() has seen every local shot (and thus
  /// after the callback has let go of the lock).
  static void done(void* ticket) {
    const Ticket* t = static_cast<const Ticket*>(ticket);
    std::lock_guard<std::mutex> lock(t->owner->mutex_);
    t->owner->done_[std::size_t(t->index)] = true;
    ++t->owner->count_;
    if (t->owner->progress_) t->owner->progress_(t->owner->count_, t->owner->local_);
    t->owner->cv_.notify_all();
  }
  void wait_for(int index) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return bool(done_[std::size_t(index)]); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<bool> done_;
  std::vector<Ticket> tickets_;
  int count_ = 0, local_ = 0;
  std::function<void(int, int)> progress_;
};

/// A shot's contribution waiting in the reduction tree: it stands for 2^level shots.
struct Partial {
  int level;
  starpu_data_handle_t sum;
};

template <typename T>
ImagingResult run(const Model& m, const Survey& s, const NumericalOptions& o, int mode, const GradientHooks& hooks) {
  const auto t0 = std::chrono::steady_clock::now();
  ImagingResult result;
  const TimeStepping ts = choose_time_step(m, s, o);
  const Medium<T> med = build_medium<T>(m, o, ts, int(s.nt), dominant_frequency(s.wavelet(0), s.dt));
  ShotProblem<T> layout = med.layout;
  layout.storage = o.full_storage ? ShotProblem<T>::kStoreFull : ShotProblem<T>::kStoreBoundary;
  const int nrec = s.nrec(), nt = int(s.nt);
  const std::size_t region = std::size_t(m.nz) * std::size_t(m.nx), traces = std::size_t(nrec) * nt;
  if (std::size_t(layout.mz1() - layout.mz0()) * std::size_t(layout.mx1() - layout.mx0()) != region)
    throw RuntimeError("imaging: the padded grid's model region does not match the model");
  const std::vector<int> shots = evaluation_shots(s, hooks);
  const int count = int(shots.size());

  // Shots in flight: 2 × workers, fewer if memory is short; a run that cannot hold one is
  // refused before any work or handle (DESIGN §3).
  const int workers = int(starpu_worker_get_count());
  MemoryNeed need;
  const std::uint64_t t = sizeof(T);
  need.store = t * (layout.store_size() + 2 * layout.grid_size());  // the store and the final state
  need.per_shot = need.store + t * (std::uint64_t(ts.nsteps) + 2 * traces + 4 * region) + sizeof(float) * traces +
                  sizeof(long) * ShotProblem<T>::nodes_size(nrec, layout.nz) + sizeof(double);
  need.per_worker = t * (layout.work_size() + layout.adjoint_work_size());
  int levels = 1;  // partial sums the reduction tree holds at once
  while ((1 << (levels - 1)) < count) ++levels;
  need.shared = t * (med.buffer.size() + region + 2 * region * std::uint64_t(levels));
  const int window =
      shots_in_flight(need, workers, std::max(2, 2 * workers), files::available_memory(), "this run",
                      o.full_storage ? "use --storage boundary, or fewer workers with STARPU_NCPU"
                                     : "a smaller model, a shorter record, or fewer workers with STARPU_NCPU");

  // Read-only inputs every rank builds itself; work arrays local to each worker.
  std::vector<T> velocity(m.vp.begin(), m.vp.end());
  starpu_data_handle_t medium = graph::per_rank_vector(med.buffer.data(), med.buffer.size(), sizeof(T));
  starpu_data_handle_t vel = graph::per_rank_vector(velocity.data(), region, sizeof(T));
  starpu_data_handle_t fwork = graph::scratch_vector(layout.work_size(), sizeof(T));
  starpu_data_handle_t awork = graph::scratch_vector(layout.adjoint_work_size(), sizeof(T));
  starpu_data_handle_t misfit_scratch = graph::scratch_vector(imaging::kMisfitBlocks, sizeof(double));
  std::vector<double> misfits(std::size_t(count), 0.0);  // by place in the evaluation; this rank's shots
  std::vector<starpu_data_handle_t> misfit_handles(static_cast<std::size_t>(count), nullptr);

  int local = 0;
  for (int shot : shots) local += graph::mine(shot) ? 1 : 0;
  Completion completion(count, local, hooks.on_shot_done);
  std::deque<int> in_flight;  // this rank's shots in flight (their places in the evaluation)
  std::vector<Partial> tree;
  for (int i = 0; i < count; ++i) {
    const int shot = shots[std::size_t(i)], owner = graph::owner(shot);
    ShotProblem<T> p = layout;
    p.nrec = nrec;
    ShotInputs<T> inputs;  // copied into the shot's handles (graph::input_vector)
    const ShotInputs<T>* in = nullptr;
    if (owner == graph::rank()) {
      if (int(in_flight.size()) >= window) {  // throttle: wait for the oldest local shot
        completion.wait_for(in_flight.front());
        in_flight.pop_front();
      }
      in_flight.push_back(i);
      inputs = shot_inputs(med, m, s, ts, shot);
      in = &inputs;
      p.source_index = in->nodes[0];
    }
    auto shot_vector = [&](const void* host, std::size_t n, std::size_t elem) {
      return graph::owned_vector(owner, host, n, elem);
    };
    auto shot_input = [&](const void* host, std::size_t n, std::size_t elem) {
      return graph::input_vector(owner, host, n, elem);
    };
    ForwardHandles f{
        medium,
        shot_input(in ? in->nodes.data() : nullptr, ShotProblem<T>::nodes_size(nrec, layout.nz), sizeof(long)),
        shot_input(in ? in->source.data() : nullptr, std::size_t(ts.nsteps), sizeof(T)),
        shot_vector(nullptr, traces, sizeof(T)),
        fwork,
        shot_vector(nullptr, layout.store_size(), sizeof(T)),
        shot_vector(nullptr, 2 * layout.grid_size(), sizeof(T))};
    insert_forward<T>(f, p, o.order);

    MisfitHandles mh{f.traces, shot_input(in ? s.observed(shot) : nullptr, traces, sizeof(float)),
                     shot_vector(nullptr, traces, sizeof(T)), shot_vector(&misfits[std::size_t(i)], 1, sizeof(double)),
                     misfit_scratch};
    misfit_handles[std::size_t(i)] = mh.misfit;
    insert_misfit(mh, mode);

    AdjointHandles a{medium,
                     f.nodes,
                     f.source,
                     mh.residual,
                     f.store,
                     f.final_state,
                     shot_vector(nullptr, region, sizeof(T)),
                     shot_vector(nullptr, region, sizeof(T)),
                     awork};
    insert_adjoint<T>(a, p, o.order);

    ImageHandles ih{a.correlation, a.illumination, vel, shot_vector(nullptr, 2 * region, sizeof(T))};
    insert_image(ih, mode, &Completion::done, completion.ticket(i));
    for (starpu_data_handle_t h :
         {f.nodes, f.source, f.traces, f.store, f.final_state, mh.observed, mh.residual, a.correlation, a.illumination})
      starpu_data_unregister_submit(h);

    // The reduction tree: equal levels merge, left += right, as in a binary counter. Each
    // sum runs where the left part lives; StarPU-MPI brings the right part there.
    tree.push_back({0, ih.contribution});
    while (tree.size() >= 2 && tree[tree.size() - 1].level == tree[tree.size() - 2].level) {
      const Partial right = tree.back();
      tree.pop_back();
      insert_reduce(tree.back().sum, right.sum);
      starpu_data_unregister_submit(right.sum);
      ++tree.back().level;
    }
  }
  while (tree.size() >= 2) {  // the remaining partial sums, right to left
    const Partial right = tree.back();
    tree.pop_back();
    insert_reduce(tree.back().sum, right.sum);
    starpu_data_unregister_submit(right.sum);
  }

  // The model side lives on rank 0: the optimiser's step, and the result.
  const starpu_data_handle_t root = tree.front().sum;
  starpu_data_handle_t next_model = nullptr;
  if (hooks.step) {  // the optimiser's update closes the graph
    if (!hooks.model || hooks.model->size() != region) throw RuntimeError("imaging: the step needs the model region");
    next_model = graph::owned_vector(0, hooks.model->data(), region, sizeof(double));
    insert_step(root, misfit_handles, next_model, hooks.step);
  }
  graph::send_to(root, 0);
  if (graph::rank() == 0) {
    if (starpu_data_acquire(root, STARPU_R) != 0) throw RuntimeError("imaging: cannot read the reduced result");
    const T* sum = static_cast<const T*>(starpu_data_get_local_ptr(root));
    result.values.assign(sum, sum + region);
    result.illumination.assign(sum + region, sum + 2 * region);
    starpu_data_release(root);
  }
  starpu_data_unregister(root);
  if (next_model) starpu_data_unregister(next_model);                       // waits for the step
  for (starpu_data_handle_t h : misfit_handles) starpu_data_unregister(h);  // waits, brings the value home
  for (int i = 0; i < count; ++i)                                           // every local callback has run
    if (graph::mine(shots[std::size_t(i)])) completion.wait_for(i);
  if (graph::distributed()) mpi::sum_to_root(misfits);  // one rank holds each: the sum is that value exactly
  for (double j : misfits) result.misfit += j;          // in shot order: the same bits every run
  for (starpu_data_handle_t h : {medium, vel, fwork, awork, misfit_scratch}) starpu_data_unregister(h);
  if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);

  result.time = ts;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.cell_updates = 2.0 * layout.nz * layout.nx * ts.nsteps * count;
  return result;
}

ImagingResult run_any(const Model& m, const Survey& s, const NumericalOptions& o, int mode,
                      const GradientHooks& hooks) {
  check_imaging_inputs(m, s, o);
  return o.double_precision ? run<double>(m, s, o, mode, hooks) : run<float>(m, s, o, mode, hooks);
}

}  // namespace

std::vector<double> finish_rtm_image(const Model& m, const std::vector<double>& raw,
                                     const std::vector<double>& illumination, double acquisition_depth,
                                     double mute_depth) {
  double peak = 0;
  for (double v : illumination) peak = std::max(peak, v);
  std::vector<double> c(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) c[i] = raw[i] / (illumination[i] + 0.01 * peak + 1e-300);
  auto at = [&](int z, int x) {  // edge replication outside the model
    return c[std::size_t(std::clamp(z, 0, m.nz - 1)) * std::size_t(m.nx) + std::size_t(x)];
  };
  std::vector<double> out(raw.size());
  for (int z = 0; z < m.nz; ++z) {
    const double depth = m.z0 + z * m.dz;
    double w = 1;
    if (depth <= acquisition_depth)
      w = 0;
    else if (depth < mute_depth)
      w = std::pow(std::sin(M_PI / 2 * (depth - acquisition_depth) / (mute_depth - acquisition_depth)), 2);
    for (int x = 0; x < m.nx; ++x)
      out[std::size_t(z) * std::size_t(m.nx) + std::size_t(x)] = w * (at(z + 1, x) - at(z - 1, x)) / (2 * m.dz);
  }
  return out;
}

std::pair<double, double> rtm_mute(const Model& m, const Survey& s) {
  double depth = m.z0;
  for (const auto& p : s.sources) depth = std::max(depth, p[0]);
  for (int shot = 0; shot < s.nshots(); ++shot)
    for (const auto& p : s.receivers_of(shot)) depth = std::max(depth, p[0]);
  double vmin = m.vp[0];
  for (int x = 0; x < m.nx; ++x) vmin = std::min(vmin, m.vp[std::size_t(x)]);
  return {depth, depth + vmin / dominant_frequency(s.wavelet(0), s.dt)};
}

void check_imaging_inputs(const Model& m, const Survey& s, const NumericalOptions& o) {
  check_modeling_inputs(m, s, o);
  for (int shot = 0; shot < s.nshots(); ++shot)  // this rank's shots (every shot with one process)
    if (graph::mine(shot) && !s.observed(shot))
      throw InputError("--data: the survey carries no observed data of shape (nshots, nrec, nt) = (" +
                       std::to_string(s.nshots()) + ", " + std::to_string(s.nrec()) + ", " + std::to_string(s.nt) +
                       ") for shot " + std::to_string(shot));
}

ImagingResult misfit_gradient(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks) {
  return run_any(m, s, o, imaging::kGradient, hooks);
}

ImagingResult rtm_stack(const Model& m, const Survey& s, const NumericalOptions& o) {
  return run_any(m, s, o, imaging::kRtm, {});
}

}  // namespace starwave
