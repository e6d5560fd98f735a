// src/workflows/gradient.cpp — the gradient and RTM algorithm on the task graph of docs/design.md
// §3. Per shot:
//     forward_keep(s) → misfit(s) → adjoint(s) → image(s)
// then the contributions are summed by a fixed binary tree over shot index (built as a
// binary counter while shots are submitted), so the result has the same bits whatever
// ran where (graph/reduction.hpp). At most one shot per CPU worker and two per CUDA
// worker of a rank are in flight (graph/window.hpp), or with shot batches (one forward and
// one adjoint task for B consecutive shots of a rank: docs/design.md §3) two batches a CUDA
// worker; each shot's data is handed back after its last task (graph/shots.hpp).
#include "src/workflows/gradient.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "codelets/adjoint.hpp"
#include "codelets/born.hpp"
#include "codelets/failure.hpp"
#include "codelets/forward.hpp"
#include "codelets/image.hpp"
#include "codelets/misfit.hpp"
#include "graph/clock.hpp"
#include "graph/data.hpp"
#include "graph/reduction.hpp"
#include "graph/resting.hpp"
#include "graph/shots.hpp"
#include "graph/window.hpp"
#include "kernels/misfit_image.hpp"
#include "src/base/checksum.hpp"
#include "src/base/error.hpp"
#include "src/io/hdf5.hpp"
#include "src/memory/plan.hpp"
#include "src/memory/store_plan.hpp"
#include "src/runtime/runtime.hpp"
#include "src/runtime/scratch.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/modeling.hpp"
#include "src/workflows/shot_run.hpp"
#include "src/workflows/state_tasks.hpp"

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

/// One evaluation's task graph: per shot forward_keep → misfit → adjoint → image, the
/// contributions summed by the fixed tree. `reference` (RTM, Mode::kRtm): the model whose
/// modeled data are subtracted from the observed ones; null: the model `m` itself (the forward
/// that keeps the wavefield). `born` (a perturbation δv, one value a model cell): J and Jᵀ in
/// one graph, born_keep (J δv, and u kept as forward_keep keeps it) → misfit against zeros
/// (r = W J δv, ½‖J δv‖²_W) → adjoint → image: Jᵀ W J δv.
template <typename T>
class Evaluation {
 public:
  using Tree = graph::ReductionTree<graph::Data>;

  Evaluation(const Model& m, const Survey& s, const NumericalOptions& o, imaging::Mode mode, const GradientHooks& hooks,
             const Model* reference, const std::vector<double>* born = nullptr, ImageSums sums = {})
      : m_(m),
        s_(s),
        o_(o),
        mode_(mode),
        hooks_(hooks),
        reference_(reference),
        born_(born),
        run_(set_up_shots<T>(m, s, o)),
        shots_(evaluation_shots(s, hooks)),
        region_(m.cells()),
        traces_(std::size_t(s.nrec()) * s.nt) {
    if (reference_) {
      ref_medium_ = build_medium<T>(*reference_, o, run_.time, int(s.nt), run_.f0);
      if (ref_medium_.buffer.size() != run_.medium.buffer.size() ||
          ref_medium_.layout.grid_size() != run_.medium.layout.grid_size())
        throw RuntimeError("imaging: the reference model's grid differs from the migration model's");
    }
    // An image needs no exact edges: by default RTM keeps the rim alone, a gradient the layers too.
    const bool image = mode == imaging::Mode::kRtm || mode == imaging::Mode::kRtmObserved;
    request_.storage = o.storage != NumericalOptions::kStorageDefault ? o.storage
                       : image                                        ? StorePlan::kStoreShell
                                                                      : StorePlan::kStoreBoundary;
    request_.compression = o.store_compression;
    request_.checkpoint_every =
        o.checkpoint_every == NumericalOptions::kCheckpointAuto ? StoreRequest::kAuto : o.checkpoint_every;
    run_.layout.storage = request_.storage;
    run_.layout.compression = request_.compression;
    static_cast<ImageSums&>(run_.layout) = sums;
    if (std::size_t(run_.layout.model_cells()) != region_)
      throw RuntimeError("imaging: the padded grid's model region does not match the model");
  }

  ImagingResult run() {
    const graph::Resting resting;  // the workers run this graph, and rest once it is done
    const int window_size = plan_window();
    window_size_ = window_size;
    if (hooks_.plan_only) {
      ImagingResult planned;
      planned.time = run_.time;
      return planned;
    }
    // Read-only inputs every rank builds itself; work arrays local to each worker.
    std::vector<T> velocity(m_.vp.begin(), m_.vp.end());
    const ShotProblem<T>& layout = run_.layout;
    Shared d;
    d.medium = graph::per_rank_vector(run_.medium.buffer.data(), run_.medium.buffer.size(), sizeof(T));
    if (reference_)
      d.ref_medium = graph::per_rank_vector(ref_medium_.buffer.data(), ref_medium_.buffer.size(), sizeof(T));
    d.velocity = graph::per_rank_vector(velocity.data(), region_, sizeof(T));
    d.forward_work = graph::scratch_vector(batch_ > 1 ? layout.batch_work_size(batch_) : layout.work_size(), sizeof(T));
    std::vector<T> scatter;
    if (born_) {  // J's δv as the born task reads it, and its scratch
      scatter = born_scatter(layout, m_, *born_, o_.perturb_layers);
      d.scatter = graph::per_rank_vector(scatter.data(), scatter.size(), sizeof(T));
      d.born_work = graph::scratch_vector(born_work_size(layout), sizeof(T));
      zeros_.assign(traces_, 0.0f);
    }
    d.adjoint_work = graph::scratch_vector(
        batch_ > 1 ? layout.adjoint_batch_work_size(batch_) : layout.adjoint_work_size(), sizeof(T));
    d.misfit_scratch =
        graph::scratch_vector(imaging::misfit_scratch_size(misfit(), s_.nrec(), long(s_.nt)), sizeof(double));
    misfits_.assign(shots_.size(), 0.0);
    if (hooks_.states) {  // through states: the store in memory, this process alone
      if (layout.split_store || graph::distributed())
        throw InputError("a gradient through states keeps its shots' stores in memory, in one process");
      states_ = std::make_unique<StateTasks<T>>(run_, m_, s_, *hooks_.states);
    }
    if (hooks_.source_gradient && !states_)
      sources_ = std::make_unique<SourceGradients<T>>(run_, m_, s_, *hooks_.source_gradient);

    int local = 0;
    for (int shot : shots_) local += graph::mine(shot, s_.nshots()) ? 1 : 0;
    graph::Window window(window_size, local, hooks_.on_shot_done);
    Tree tree([](graph::Data& sum, graph::Data&& part) { insert_reduce(sum, part); });  // sum += part
    bool stopped = false;
    for (const std::vector<std::size_t>& batch : batches()) {
      if (batch[0] > 0 &&
          graph::size() == 1) {  // alone: a stop asked while the next shot waits for its place starts no shot
        window.wait_for_room();
        if ((stopped = interrupted())) break;
      }
      if (batch.size() == 1)
        submit_shot(batch[0], d, window, tree);
      else
        submit_batch(batch, d, window, tree);
    }
    ImagingResult result = collect(tree.finish(), window);
    if (states_) states_->hand_on(state_shots_);
    if (sources_) sources_->hand_on();
    for (graph::Data* h : {&d.medium, &d.ref_medium, &d.velocity, &d.forward_work, &d.adjoint_work, &d.misfit_scratch,
                           &d.scatter, &d.born_work})
      if (*h) h->close();
    if (const std::string failure = codelets::take_failure(); !failure.empty()) throw TaskError(failure);
    if (stopped) throw interruption();
    result.time = run_.time;
    result.seconds = run_.seconds();
    result.cell_updates = run_.cell_updates(int(shots_.size()), 2);
    return result;
  }

 private:
  /// What every shot's tasks share.
  struct Shared {
    graph::Data medium, ref_medium, velocity, forward_work, adjoint_work, misfit_scratch;
    graph::Data scatter, born_work;  // J and Jᵀ: 2δv/v on the padded grid, the born task's scratch
  };

  /// Shots in flight: one per CPU worker, two per CUDA worker (its shots take milliseconds:
  /// the next one waits ready while the submitting thread reads a shot's data), two at
  /// least; fewer if memory is short, main memory for the CPU workers' shots, each GPU's for
  /// its own (docs/design.md §3, §9). A shot's tasks run one after another, so a second shot
  /// per CPU worker only holds memory: with 2 × workers the demo's gradient took 7 % longer
  /// and peaked at 335 MB instead of 196. Where one shot does not fit main memory the GPUs
  /// alone take shots, and the reverse (graph::take_shots_on). The store is the memory
  /// plan's choice (src/memory/store_plan.hpp), rank 0's on every rank.
  int plan_window() {
    ShotProblem<T>& layout = run_.layout;
    const StoreRoom room = store_room();
    const ShotHoldings holdings = shot_holdings();
    StorePlan& plan = layout;
    plan = choose_store(layout, request_, holdings, room);
    if (graph::distributed()) {
      std::vector<double> choice{double(plan.checkpoint_every), plan.split_store ? 1.0 : 0.0};
      mpi::broadcast(choice);
      plan.checkpoint_every = int(choice[0]);
      plan.split_store = choice[1] != 0;
    }
    if (layout.split_store) split_intervals(layout, room);
    MemoryNeed need = shot_need(layout, holdings);
    StoreShots placed = place_store_shots(layout, need, room);
    batch_ = 1;
    if (const int asked = graph::distributed() ? mpi::from_rank0(choose_batch()) : choose_batch(); asked > 1) {
      // Each worker's scratch holds a batch's arrays, a CUDA worker two batches' shots: kept
      // where every GPU that takes shots holds a batch a worker (batch_held), on every rank.
      MemoryNeed batched = need;
      batched.per_worker = sizeof(T) * (layout.batch_work_size(asked) + layout.adjoint_batch_work_size(asked));
      batched.batch = asked;
      int held = 1;
      try {
        const StoreShots b = place_store_shots(layout, batched, room);
        held = batch_held(b.where, room.gpus, asked);
        if (held > 1) {
          need = batched;
          placed = b;
        }
      } catch (const InputError&) {  // a batch's scratch leaves no room for a shot: one shot a task
      }
      batch_ = graph::distributed() ? mpi::least_over_ranks(held) : held;  // ranks register handles in one order
    }
    if (layout.split_store) split_where_ = placed.split_on_gpus ? STARPU_CUDA : STARPU_CPU;
    const ShotPlacement& where = placed.where;
    graph::take_shots_on(where.cpu_takes_shots, !where.gpu.empty() && where.gpus_take_shots);
    if (hooks_.on_plan && graph::rank() == 0)  // the shots in flight the run will have
      hooks_.on_plan(need, full_store_bytes(layout), where, std::min(int(shots_.size()), placed.shots));
    return std::max(placed.shots, batch_);  // a batch's shots take their places before its tasks
  }

  /// The shots a forward and an adjoint task run together (docs/design.md §3, "Shot batches"):
  /// STARWAVE_SHOT_BATCH's where set, else one: on an H200 (docs/gpu.md) a graph of gradient
  /// batches lost ~8.5 s and ended in an abort as StarPU shut down (likely StarPU copying the
  /// stores out in the background, which starpu_configuration turns off), and `model`'s one
  /// shot a task on the default 8 CUDA workers was faster than its batches. Batched: shots with whole stores (no
  /// checkpoints, not split, no ZFP), not through states, no source gradient, not J; no more than the largest rank's
  /// block of shots, and scratches a StarPU vector holds (< 2^32 values).
  int choose_batch() const {
    const int asked = shot_batch_asked();
    const ShotProblem<T>& l = run_.layout;
    if (asked <= 1 || born_ || hooks_.states || hooks_.source_gradient || l.split_store || l.checkpoints_size() > 0 ||
        pack16::zfp_rate(l.compression) > 0)
      return 1;
    const int block = (s_.nshots() + graph::size() - 1) / graph::size();
    int batch = std::max(1, std::min({asked, block, int(shots_.size())}));
    while (batch > 1 && l.adjoint_batch_work_size(batch) > std::size_t(UINT32_MAX)) --batch;
    return batch;
  }
  /// The evaluation's shots (places in shots_) in batches of batch_ at most: runs of consecutive
  /// shots of one rank, in shot order (the tree adds the shots' parts in that order).
  std::vector<std::vector<std::size_t>> batches() const {
    std::vector<std::vector<std::size_t>> out;
    for (std::size_t i = 0; i < shots_.size(); ++i) {
      const int owner = graph::owner(shots_[i], s_.nshots());
      if (out.empty() || int(out.back().size()) >= batch_ ||
          graph::owner(shots_[out.back().back()], s_.nshots()) != owner)
        out.emplace_back();
      out.back().push_back(i);
    }
    return out;
  }

  /// What a shot in flight holds beside its store and work arrays, and what the run shares.
  ShotHoldings shot_holdings() const {
    const std::uint64_t t = sizeof(T), count = shots_.size();
    ShotHoldings h;
    const std::uint64_t sums = std::uint64_t(run_.layout.illumination_sums());  // [image | illumination …]
    h.per_shot = t * (std::uint64_t(run_.time.nsteps) + (reference_ ? 3 : 2) * traces_ + (2 + 2 * sums) * region_) +
                 sizeof(float) * ((s_.data_low.empty() ? 1 : 2) * traces_ +
                                  std::uint64_t(s_.nrec()) * (s_.windows.empty() ? 1 : 4)) +
                 points_bytes<T>(run_.layout, most_point_nodes(m_, s_)) + sizeof(double);
    h.shared = t * (run_.medium.buffer.size() + ref_medium_.buffer.size() + region_ +
                    (1 + sums) * region_ * std::uint64_t(Tree::most_held(int(count))));
    h.plain_forward = reference_ != nullptr;
    h.born_work = born_ ? t * born_work_size(run_.layout) : 0;
    if (born_) h.shared += t * run_.layout.grid_size();  // the scatter
    // Each worker's misfit scratch (a trace misfit's sums and envelope workspaces).
    h.shared += sizeof(double) * std::uint64_t(imaging::misfit_scratch_size(misfit(), s_.nrec(), long(s_.nt))) *
                std::uint64_t(graph::workers());
    return h;
  }

  /// Shot i of the evaluation on the way through its tasks: its layout and handles.
  struct ShotTasks {
    int shot = 0, owner = 0;
    ShotProblem<T> p;
    bool windowed = false;
    graph::ImagingShot h;
  };

  /// Shot i's data: a place in the window first (on its rank), then its handles, its
  /// observed traces read in (read now when streamed, copied into its handle, then dropped).
  ShotTasks shot_data(std::size_t i, graph::Window& window) {
    ShotTasks t;
    t.shot = shots_[i];
    t.owner = graph::owner(t.shot, s_.nshots());
    const int shot = t.shot, owner = t.owner;
    if (owner == graph::rank()) {
      window.admit();  // a place in the window before the shot's inputs
      make_room();
    }
    const typename ShotRun<T>::Shot x = run_.shot(m_, s_, shot);
    t.p = x.problem;
    std::vector<float> weights, streamed, split;
    graph::ShotReads<T> reads;
    reads.windowed = !s_.windows.empty();
    reads.split_observed = !born_ && !s_.data_low.empty();  // a float64 cotangent: samples, then remainders
    if (owner == graph::rank()) {
      weights = s_.trace_weights(shot);
      const std::vector<float> windows = s_.trace_windows(shot);
      weights.insert(weights.end(), windows.begin(), windows.end());
      const float* observed = born_ ? zeros_.data() : s_.observed(shot);
      if (!observed && hooks_.observed) {
        streamed = hooks_.observed(shot);
        if (streamed.size() != traces_)
          throw RuntimeError("imaging: shot " + std::to_string(shot) + "'s observed traces have " +
                             std::to_string(streamed.size()) + " samples, not " + std::to_string(traces_));
        observed = streamed.data();
      }
      if (reads.split_observed && observed) {  // [samples | remainders], as the misfit task reads them
        split.assign(observed, observed + traces_);
        const float* low = s_.observed_low(shot);
        if (!low) throw RuntimeError("imaging: shot " + std::to_string(shot) + " has no remainders of its cotangent");
        split.insert(split.end(), low, low + traces_);
        observed = split.data();
      }
      reads = {x.inputs.nodes.data(), x.inputs.signals.data(), observed,
               weights.data(),        reads.windowed,          reads.split_observed};
    }
    t.windowed = reads.windowed;
    t.h = graph::imaging_shot<T>(owner, t.p, reads, &misfits_[i], reference_ != nullptr);
    return t;
  }

  /// Shot i of the evaluation: its data and its tasks, r = F(m) − d, g_s = Fᵀ-correlation of
  /// r, into the tree.
  void submit_shot(std::size_t i, Shared& d, graph::Window& window, Tree& tree) {
    ShotTasks t = shot_data(i, window);
    const ShotProblem<T>& p = t.p;
    graph::ImagingShot& h = t.h;
    StateShot st = states_ ? states_->submit(t.shot, t.owner) : StateShot{};
    const int intervals = int(h.intervals.size());  // a split store: a task per interval
    for (int j = 0; j < intervals; ++j)
      insert_forward_interval<T>(
          {d.medium, h.nodes, h.signals, h.traces, h.forward_work, h.intervals[std::size_t(j)], h.final_state}, p, j,
          o_.order, split_where_);
    h.forward_work.release();     // StarPU hands it back after the last interval
    if (born_ && intervals == 0)  // J δv into the traces, u kept
      insert_born<T>(
          {d.medium, d.scatter, h.nodes, h.signals, h.traces, d.born_work, h.store, h.final_state, h.checkpoints}, p,
          o_.order);
    else if (born_)  // a split store: the intervals keep u, then J δv (one forward more)
      insert_born<T>({d.medium, d.scatter, h.nodes, h.signals, h.traces, d.born_work}, p, o_.order);
    else if (intervals == 0)
      insert_forward<T>(
          st.forward({d.medium, h.nodes, h.signals, h.traces, d.forward_work, h.store, h.final_state, h.checkpoints}),
          p, o_.order);
    submit_misfit(t, d);
    const starpu_data_handle_t source = sources_ ? sources_->submit(t.shot, t.owner) : nullptr;
    for (int j = intervals - 1; j >= 0; --j) {
      AdjointHandles a{d.medium,      h.nodes,       h.signals,      h.residual,    h.intervals[std::size_t(j)],
                       h.final_state, h.correlation, h.illumination, h.adjoint_work};
      if (j > 0) a.next_store = h.intervals[std::size_t(j - 1)];
      a.source_gradient = source;
      insert_adjoint_interval<T>(a, p, j, o_.order, split_where_);
    }
    if (intervals == 0) {
      AdjointHandles a = st.adjoint({d.medium, h.nodes, h.signals, h.residual, h.store, h.final_state, h.correlation,
                                     h.illumination, d.adjoint_work, h.checkpoints});
      if (source) a.source_gradient = source;
      insert_adjoint<T>(a, p, o_.order);
    }
    if (sources_) sources_->sent();
    if (states_) state_shots_.push_back(std::move(st));
    finish_shot(t, d, window, tree);
  }

  /// A batch of the evaluation's shots (places i in shots_, one rank's): one forward task
  /// that keeps their stores, each shot's misfit, one adjoint task, each shot's image and
  /// its part of the tree, in shot order (docs/design.md §3, "Shot batches").
  void submit_batch(const std::vector<std::size_t>& places, Shared& d, graph::Window& window, Tree& tree) {
    std::vector<ShotTasks> shots;
    std::vector<ShotProblem<T>> layouts;
    std::vector<BatchShotHandles> forwards;
    std::vector<BatchAdjointHandles> adjoints;
    for (const std::size_t i : places) {
      shots.push_back(shot_data(i, window));
      const graph::ImagingShot& h = shots.back().h;
      layouts.push_back(shots.back().p);
      forwards.push_back({h.nodes, h.signals, h.traces, h.store, h.final_state});
      adjoints.push_back({h.nodes, h.signals, h.residual, h.store, h.final_state, h.correlation, h.illumination});
    }
    insert_forward_batch<T>(d.medium, d.forward_work, forwards, layouts, o_.order);
    for (ShotTasks& t : shots) submit_misfit(t, d);
    insert_adjoint_batch<T>(d.medium, d.adjoint_work, adjoints, layouts, o_.order);
    for (ShotTasks& t : shots) finish_shot(t, d, window, tree);
  }

  /// A shot's misfit task (after its reference forward, RTM's): the residual to back-propagate.
  void submit_misfit(ShotTasks& t, Shared& d) {
    graph::ImagingShot& h = t.h;
    if (reference_) insert_forward<T>({d.ref_medium, h.nodes, h.signals, h.reference, d.forward_work}, t.p, o_.order);
    insert_misfit({reference_ ? h.reference : h.traces, h.observed, h.residual, h.misfit, d.misfit_scratch, h.weights},
                  mode_, misfit(), t.windowed);
  }

  /// A shot's image task and its part in the tree; what it keeps, held until the window has room.
  void finish_shot(ShotTasks& t, Shared& d, graph::Window& window, Tree& tree) {
    graph::ImagingShot& h = t.h;
    insert_image({h.correlation, h.illumination, d.velocity, h.contribution}, mode_, &graph::Window::done, &window);
    tree.add(std::move(h.contribution));  // each sum runs where its left part lives
    misfit_data_.push_back(std::move(h.misfit));
    if (t.owner == graph::rank())
      held_.push_back({std::move(h.store), std::move(h.checkpoints), std::move(h.final_state)});
  }

  /// What a shot keeps for its adjoint (the store, its checkpoints, the final state), handed
  /// back when the window has room for the next shot: StarPU frees a handle's memory some
  /// time after its last task, and a new shot's store allocated before the old one's is
  /// freed held both (measured: 266 MiB at the peak of a run planned for 262 MiB, one shot in
  /// flight). So before a new shot the oldest shots' are closed, each waiting for its tasks:
  /// at most window-size stores exist when the next one is allocated.
  struct Kept {
    graph::Data store, checkpoints, final_state;
  };
  void make_room() {
    while (!held_.empty() && int(held_.size()) >= window_size_) {
      for (graph::Data* k : {&held_.front().store, &held_.front().checkpoints, &held_.front().final_state})
        if (*k) k->close();
      held_.pop_front();
    }
  }

  /// The sum on rank 0; each shot's misfit brought home and summed in shot order (the same
  /// bits every run).
  ImagingResult collect(graph::Data root, graph::Window& window) {
    ImagingResult result;
    graph::send_to(root, 0);
    if (graph::rank() == 0) {
      const graph::Reading sum(root);
      result.values.assign(sum.values<T>(), sum.values<T>() + region_);
      result.illumination.assign(sum.values<T>() + region_, sum.values<T>() + 2 * region_);
      if (run_.layout.receiver_illumination)
        result.receiver_illumination.assign(sum.values<T>() + 2 * region_, sum.values<T>() + 3 * region_);
    }
    root.close();
    for (graph::Data& h : misfit_data_) h.close();         // waits, brings the value home
    window.drain();                                        // every local callback has run
    if (graph::distributed()) mpi::sum_to_root(misfits_);  // one rank holds each: the sum is that value exactly
    if constexpr (graph::kSimulated) {                     // no kernel ran: a simulated result is zeros
      std::fill(result.values.begin(), result.values.end(), T(0));
      std::fill(result.illumination.begin(), result.illumination.end(), T(0));
      std::fill(result.receiver_illumination.begin(), result.receiver_illumination.end(), T(0));
      std::fill(misfits_.begin(), misfits_.end(), 0.0);
    }
    for (double j : misfits_) result.misfit += j;
    return result;
  }

  /// What this evaluation's misfit tasks compare: the hooks' misfit for a gradient, the L2
  /// for an image, a vector-Jacobian product and J's normal product.
  imaging::Misfit misfit() const {
    return mode_ == imaging::Mode::kGradient && !born_ ? hooks_.misfit : imaging::Misfit::kL2;
  }

  const Model& m_;
  const Survey& s_;
  const NumericalOptions& o_;
  const imaging::Mode mode_;
  const GradientHooks& hooks_;
  const Model* reference_;
  const std::vector<double>* born_;  // J and Jᵀ of this δv; null: the gradient or an image
  std::vector<float> zeros_;         // J and Jᵀ: the "observed" traces
  StoreRequest request_;             // what the options ask of the store
  unsigned split_where_ = 0;  // with a split store: the kind of worker that runs its shots (STARPU_CPU, STARPU_CUDA)
  ShotRun<T> run_;
  Medium<T> ref_medium_;
  const std::vector<int> shots_;
  const std::size_t region_, traces_;
  // Each shot's misfit, home in misfits_[i] (by place in the evaluation; this rank's shots).
  // On an exception they go after run()'s handles and window: ~Window has waited for every
  // task, and misfits_ outlives the handles that write into it.
  std::vector<double> misfits_;
  std::vector<graph::Data> misfit_data_;
  int window_size_ = 1;
  int batch_ = 1;                                // shots a forward and an adjoint task run together
  std::deque<Kept> held_;                        // this rank's shots' kept buffers, oldest first (make_room)
  std::unique_ptr<StateTasks<T>> states_;        // through states (GradientHooks::states)
  std::unique_ptr<SourceGradients<T>> sources_;  // the wavelets' gradients (GradientHooks::source_gradient)
  std::vector<StateShot> state_shots_;
};

ImagingResult run_any(const Model& m, const Survey& s, const NumericalOptions& o, imaging::Mode mode,
                      const GradientHooks& hooks, const Model* reference = nullptr,
                      const std::vector<double>* born = nullptr, ImageSums sums = {}) {
  if (!hooks.inputs_checked) check_imaging_inputs(m, s, o, bool(hooks.observed) || born);
  return with_precision(
      o.precision, [&](auto t) { return Evaluation<decltype(t)>(m, s, o, mode, hooks, reference, born, sums).run(); });
}

}  // namespace

StreamedData stream_observed_data(const std::string& path, const Survey& s, int keep) {
  const std::size_t traces = std::size_t(s.nrec()) * std::size_t(s.nt);
  StreamedData out;
  out.checksums.assign(std::size_t(s.nshots()), 0);
  for (int shot = 0; shot < s.nshots(); ++shot) {
    if (!graph::mine(shot, s.nshots()) && shot != keep) continue;
    std::vector<float> d = io::read_slice(path, "/data", shot).values;  // refuses NaN/Inf
    if (d.size() != traces) throw InputError(path + ": /data shot " + std::to_string(shot) + " is not nrec × nt");
    Checksum c;
    c.add_bytes(d.data(), traces * sizeof(float));
    if (graph::mine(shot, s.nshots())) out.checksums[std::size_t(shot)] = c.value();
    if (shot == keep) out.kept = std::move(d);
  }
  // Each shot was checked above: a read that fails during the run (memory taken meanwhile,
  // the file replaced) is a failure of the run, not bad input.
  out.read = [path](int shot) {
    try {
      const memory::Planned counted;  // the plan counted a shot's traces in flight
      return io::read_slice(path, "/data", shot).values;
    } catch (const InputError& e) {
      throw RuntimeError(e.what());
    }
  };
  return out;
}

void check_imaging_inputs(const Model& m, const Survey& s, const NumericalOptions& o, bool streamed) {
  check_modeling_inputs(m, s, o);
  for (int shot = 0; shot < s.nshots() && !streamed; ++shot)  // this rank's shots (every shot with one process)
    if (graph::mine(shot, s.nshots()) && !s.observed(shot))
      throw InputError("--data: the survey carries no observed data of shape (nshots, nrec, nt) = (" +
                       std::to_string(s.nshots()) + ", " + std::to_string(s.nrec()) + ", " + std::to_string(s.nt) +
                       ") for shot " + std::to_string(shot));
}

ImagingResult misfit_gradient(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks) {
  ImageSums sums;  // never ISIC's: the gradient is the correlation's
  sums.receiver_illumination = hooks.receiver_illumination;
  return run_any(m, s, o, imaging::Mode::kGradient, hooks, nullptr, nullptr, sums);
}

ImagingResult data_vjp(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks) {
  return run_any(m, s, o, imaging::Mode::kAdjoint, hooks);
}

ImagingResult normal_product(const Model& m, const Survey& s, const NumericalOptions& o, const std::vector<double>& dv,
                             const GradientHooks& hooks) {
  check_perturbation(m, dv, "the direction", false);  // any scale: least-squares RTM's CG direction
  return run_any(m, s, o, imaging::Mode::kGradient, hooks, nullptr, &dv);
}

ImagingResult rtm_stack(const Model& m, const Survey& s, const NumericalOptions& o, const GradientHooks& hooks,
                        const RtmOptions& rtm) {
  ImageSums sums;
  sums.receiver_illumination = rtm.compensation != Compensation::kSource;
  sums.isic = rtm.condition == ImagingCondition::kIsic;
  switch (rtm.direct) {
    case DirectWave::kModel:
      return run_any(m, s, o, imaging::Mode::kRtm, hooks, nullptr, nullptr, sums);
    case DirectWave::kNone:
      return run_any(m, s, o, imaging::Mode::kRtmObserved, hooks, nullptr, nullptr, sums);
    case DirectWave::kSmooth:
      break;
  }
  const Model reference = direct_wave_model(m, s, rtm);
  return run_any(m, s, o, imaging::Mode::kRtm, hooks, &reference, nullptr, sums);
}

}  // namespace starwave
