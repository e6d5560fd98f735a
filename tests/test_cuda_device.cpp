// tests/test_cuda_device.cpp — the CUDA kernels on a real GPU against the CPU kernels, bit
// for bit (docs/design.md §3, §7): every propagation kernel (forward, store, adjoint) for every
// order, float and double, with and without a free surface; the misfit, image and reduce
// kernels; a gradient, an image and modeled data through StarPU with CPU workers only,
// CUDA workers only, and both; a refused launch reported with its name and CUDA's words.
// Skips, saying why, where CUDA is not compiled in or no GPU is present.
#include <gtest/gtest.h>
#include <libgen.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/adjoint.hpp"
#include "kernels/misfit_image.hpp"
#include "src/runtime/runtime.hpp"
#include "src/synthetic/synth.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/helpers.hpp"

#ifdef STARWAVE_USE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/misfit_image.hpp"
#include "kernels/cuda/propagate.hpp"
#endif

namespace starwave::test {
namespace {

/// Why this machine cannot run the device tests, or "" when it can.
std::string no_device() {
#ifndef STARWAVE_USE_CUDA
  return "CUDA codelets are not compiled in this build (STARWAVE_USE_CUDA=OFF)";
#else
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    return std::string("no CUDA device on this machine (") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
           "); run on a GPU machine to compare the CUDA codelets with the CPU";
  return "";
#endif
}

#define SKIP_WITHOUT_DEVICE()              \
  do {                                     \
    const std::string why = no_device();   \
    if (!why.empty()) GTEST_SKIP() << why; \
  } while (0)

#ifdef STARWAVE_USE_CUDA
/// A device copy of a host array, freed with the object.
template <typename T>
struct DeviceArray {
  T* ptr = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(std::size_t count) : n(count) {
    EXPECT_EQ(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr, 0, std::max<std::size_t>(n, 1) * sizeof(T)), cudaSuccess);
  }
  template <typename V>
  explicit DeviceArray(const V& host) : DeviceArray(host.size()) {
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> host() const {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
};

/// One shot's forward (with a store) and adjoint on the CPU and on the GPU; every output
/// compared bit for bit.
template <typename T, int Order>
void compare_shot(const Model& m, const Survey& s, bool free_surface, int storage, int column_planes = 0,
                  int checkpoint_every = 0, int compression = pack16::kNone, int march_planes = 0) {
  NumericalOptions o;
  o.order = Order;
  o.free_surface = free_surface;
  o.precision = precision_of<T>();
  const std::string what = std::to_string(m.dim) + "-D, order " + std::to_string(Order) + ", " +
                           (sizeof(T) == 8 ? "double" : "float") + ", free surface " + std::to_string(free_surface) +
                           ", storage " + std::to_string(storage) + ", column runs " + std::to_string(column_planes) +
                           ", marching " + std::to_string(march_planes) + ", checkpoints every " +
                           std::to_string(checkpoint_every) + ", store " + compression_name(compression);

  // CPU
  auto c = prepare_shot<T>(m, s, o);
  ShotProblem<T>& pc = c->p;
  pc.storage = storage;
  pc.checkpoint_every = checkpoint_every;
  pc.compression = compression;
  c->work.assign(pc.adjoint_work_size(), T(0));
  pc.work = c->work.data();
  std::vector<T> store(pc.store_size()), final_state(2 * pc.grid_size()), checkpoints(pc.checkpoints_size());
  pc.store = store.data();
  pc.final_state = final_state.data();
  pc.checkpoints = checkpoints.data();
  const std::size_t region = std::size_t(pc.model_cells());
  std::vector<T> corr(region, T(0)), illum(region, T(0));
  cpu::forward<Order, T>(pc);
  const std::vector<T> residual = c->traces;  // the traces as adjoint source
  cpu::adjoint<Order, T>(pc, residual.data(), corr.data(), illum.data(), nullptr);

  // GPU
  auto g = prepare_shot<T>(m, s, o);
  ShotProblem<T> p = g->p;
  p.storage = storage;
  p.column_planes = column_planes;
  p.march_planes = march_planes;
  p.checkpoint_every = checkpoint_every;
  p.compression = compression;
  DeviceArray<T> medium(g->med.buffer), signals(g->in.signals), work(p.adjoint_work_size()), traces(g->traces.size()),
      d_store(p.store_size()), d_final(2 * p.grid_size()), d_res(residual), d_corr(region), d_illum(region),
      d_checkpoints(p.checkpoints_size());
  DeviceArray<long> nodes(g->in.nodes);
  g->med.attach(p, medium.ptr);
  p.attach_signals(signals.ptr);
  p.attach_nodes(nodes.ptr);
  p.work = work.ptr;
  p.traces = traces.ptr;
  p.store = d_store.ptr;
  p.final_state = d_final.ptr;
  p.checkpoints = d_checkpoints.ptr;
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cuda::Status st = cuda::forward<Order, T>(p, stream);
  ASSERT_TRUE(bool(st)) << st.launch << ": " << cuda::error_string(st.code);
  st = cuda::adjoint<Order, T>(p, d_res.ptr, d_corr.ptr, d_illum.ptr, stream);
  ASSERT_TRUE(bool(st)) << st.launch << ": " << cuda::error_string(st.code);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);

  const std::vector<T> gt = traces.host(), gs = d_store.host(), gf = d_final.host(), gc = d_corr.host(),
                       gi = d_illum.host();
  EXPECT_TRUE(same_bits(c->traces, gt)) << "traces, " << what << ": " << first_difference(c->traces, gt);
  EXPECT_TRUE(same_bits(store, gs)) << "store, " << what << ": " << first_difference(store, gs);
  if (checkpoint_every > 0) {
    const std::vector<T> gk = d_checkpoints.host();
    EXPECT_TRUE(same_bits(checkpoints, gk)) << "checkpoints, " << what << ": " << first_difference(checkpoints, gk);
  }
  EXPECT_TRUE(same_bits(final_state, gf)) << "final state, " << what << ": " << first_difference(final_state, gf);
  EXPECT_TRUE(same_bits(corr, gc)) << "correlation, " << what << ": " << first_difference(corr, gc);
  EXPECT_TRUE(same_bits(illum, gi)) << "illumination, " << what << ": " << first_difference(illum, gi);
  EXPECT_GT(norm(std::vector<double>(corr.begin(), corr.end())), 0) << what;
}

template <typename T>
void compare_all_orders() {
  Model m = constant_model(61, 83, 10, 1800);
  for (int z = 0; z < m.nz; ++z)
    for (int x = 0; x < m.nx; ++x) m.at(z, x) = 1800 + 20 * z + 2 * x;
  Survey s = point_survey({100, 300}, {{10, 0}, {10, 820}, {600, 400}, {0, 300}, {10, 820}}, 15, 1e-3, 0.5);
  for (bool fs : {false, true})
    for (int storage : {ShotProblem<T>::kStoreBoundary, ShotProblem<T>::kStoreFull, ShotProblem<T>::kStoreShell}) {
      compare_shot<T, 2>(m, s, fs, storage);
      compare_shot<T, 4>(m, s, fs, storage);
      compare_shot<T, 6>(m, s, fs, storage);
      compare_shot<T, 8>(m, s, fs, storage);
    }
  for (bool fs : {false, true}) compare_shot<T, 8>(m, s, fs, ShotProblem<T>::kStoreBoundary, 0, 17);  // checkpoints
  // 16-bit stores: the atomic maxima, the words, the decoded reads (with checkpoints: the re-runs')
  compare_shot<T, 8>(m, s, false, ShotProblem<T>::kStoreBoundary, 0, 0, pack16::kHalf);
  compare_shot<T, 4>(m, s, true, ShotProblem<T>::kStoreFull, 0, 17, pack16::kBfloat);
}

/// 3-D: a heterogeneous cube with receivers sharing a node; the u and μ launches' column
/// runs of one plane, of uneven lengths, and of the default length; marching in chunks of 5
/// and 16 planes (tiles of 16 × 32 columns: 4 × 3 of them over the 59 × 69 columns with the
/// layers, the last ones partial).
template <typename T>
void compare_3d() {
  Model m = constant_model_3d(23, 19, 29, 10, 2000);
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) m.at(z, y, x) = 1900 + 20 * z + 11 * y + 7 * x;
  Survey s = point_survey({60, 90, 140}, {{0, 0, 0}, {0, 180, 280}, {200, 90, 140}, {0, 0, 0}, {10, 90, 20}}, 15, 1e-3,
                          0.2, true);
  for (bool fs : {false, true})
    for (int planes : {1, 4, 7, 0}) {
      compare_shot<T, 8>(m, s, fs, ShotProblem<T>::kStoreBoundary, planes);
      compare_shot<T, 4>(m, s, fs, ShotProblem<T>::kStoreFull, planes);
    }
  for (bool fs : {false, true})
    for (int march : {5, 16}) {
      compare_shot<T, 8>(m, s, fs, ShotProblem<T>::kStoreBoundary, 0, 0, pack16::kNone, march);
      compare_shot<T, 4>(m, s, fs, ShotProblem<T>::kStoreFull, 0, 0, pack16::kNone, march);
    }
  for (bool fs : {false, true}) compare_shot<T, 8>(m, s, fs, ShotProblem<T>::kStoreBoundary, 0, 13);  // checkpoints
  compare_shot<T, 8>(m, s, true, ShotProblem<T>::kStoreBoundary, 0, 13, pack16::kHalf);               // 16-bit store
}

/// nrec weights (some dead) and, `windowed`, their time windows after them: windows of
/// several widths and tapers, one past the record's end, one with no taper.
std::vector<float> weights_and_windows(long nrec, long nt, bool windowed) {
  std::vector<float> w(static_cast<std::size_t>(nrec));
  for (std::size_t r = 0; r < w.size(); ++r) w[r] = r % 7 == 2 ? 0.0f : float(1 + r % 4) * 0.25f;
  for (long r = 0; r < nrec && windowed; ++r) {
    const float first = float((r * 13) % nt) - 5.5f, taper = r % 5 == 1 ? 0.0f : 3.0f + float(r % 9);
    w.insert(w.end(), {first, first + float(5 + r % 11), taper});
  }
  return w;
}

template <typename T>
void compare_imaging_kernels() {
  const long n = 3 * imaging::kMisfitLanes + 777;
  const std::size_t count = std::size_t(n);
  std::vector<T> syn(count), corr(count), ill(count), vel(count), part(2 * count);
  std::vector<float> obs(count);
  for (long i = 0; i < n; ++i) {
    const std::size_t k = std::size_t(i);
    syn[k] = T(std::sin(0.01 * double(i)) * 1e-3);
    obs[k] = float(std::cos(0.013 * double(i)) * 1e-3);
    corr[k] = T(std::sin(0.002 * double(i)));
    ill[k] = T(1 + std::cos(0.003 * double(i)));
    vel[k] = T(1500 + i % 2500);
  }
  for (std::size_t k = 0; k < part.size(); ++k) part[k] = T(std::cos(0.0007 * double(k)));
  for (imaging::Mode mode : {imaging::Mode::kGradient, imaging::Mode::kRtm, imaging::Mode::kRtmObserved})
    for (bool windowed : {false, true}) {
      const std::string what = std::string(sizeof(T) == 8 ? "double" : "float") + ", mode " +
                               std::to_string(int(mode)) + (windowed ? ", windowed" : "");
      std::vector<T> res(count);
      const long traces = n / 61 + 1;  // traces of 61 samples, some dead, some weighted
      const std::vector<float> weight = weights_and_windows(traces, 61, windowed);
      const double J = imaging::misfit_fixed_order(
          syn.data(), obs.data(), res.data(), n, mode,
          imaging::TraceWeights{weight.data(), 61, windowed ? weight.data() + traces : nullptr});
      std::vector<T> out(2 * count);
      for (long k = 0; k < n; ++k)
        imaging::contribution_point(corr.data(), ill.data(), vel.data(), out.data(), n, mode, k);
      std::vector<T> sum = out;
      for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += part[k];

      DeviceArray<T> d_syn(syn), d_res(count), d_corr(corr), d_ill(ill), d_vel(vel), d_out(2 * count), d_part(part);
      DeviceArray<float> d_obs(obs), d_weight(weight);
      DeviceArray<double> d_blocks(std::size_t(imaging::kMisfitBlocks)), d_J(std::size_t(1));
      ASSERT_TRUE(bool(cuda::misfit(d_syn.ptr, d_obs.ptr, d_res.ptr, d_blocks.ptr, d_J.ptr, n, mode,
                                    {d_weight.ptr, 61, windowed ? d_weight.ptr + traces : nullptr}, nullptr)));
      ASSERT_TRUE(bool(cuda::contribution(d_corr.ptr, d_ill.ptr, d_vel.ptr, d_out.ptr, n, mode, 1, nullptr)));
      const std::vector<T> g_out = d_out.host();
      ASSERT_TRUE(bool(cuda::accumulate(d_out.ptr, d_part.ptr, 2 * n, nullptr)));
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const double gJ = d_J.host()[0];
      EXPECT_EQ(std::memcmp(&J, &gJ, sizeof J), 0) << "misfit, " << what << ": " << J << " vs " << gJ;
      EXPECT_TRUE(same_bits(res, d_res.host())) << "residual, " << what;
      EXPECT_TRUE(same_bits(out, g_out)) << "contribution, " << what << ": " << first_difference(out, g_out);
      EXPECT_TRUE(same_bits(sum, d_out.host())) << "reduce, " << what;
    }
  // The trace misfits (kernels/misfit_trace.hpp): 183 traces of 61 samples.
  const long nrec = 183, nt = 61;
  for (imaging::Misfit f : {imaging::Misfit::kNormalized, imaging::Misfit::kCorrelation, imaging::Misfit::kEnvelope})
    for (bool windowed : {false, true}) {
      const std::string what = std::string(sizeof(T) == 8 ? "double" : "float") + ", misfit " + std::to_string(int(f)) +
                               (windowed ? ", windowed" : "");
      const std::vector<float> weight = weights_and_windows(nrec, nt, windowed);
      const std::size_t size = std::size_t(imaging::misfit_scratch_size(f, nrec, nt));
      std::vector<T> res(std::size_t(nrec * nt));
      std::vector<double> scratch(size);
      const double J =
          imaging::misfit_traces(syn.data(), obs.data(), res.data(), scratch.data(), nrec, nt, f,
                                 imaging::TraceWeights{weight.data(), nt, windowed ? weight.data() + nrec : nullptr});
      DeviceArray<T> d_syn(syn), d_res(res.size());
      DeviceArray<float> d_obs(obs), d_weight(weight);
      DeviceArray<double> d_scratch(size), d_J(std::size_t(1));
      ASSERT_TRUE(bool(cuda::trace_misfit(d_syn.ptr, d_obs.ptr, d_res.ptr, d_scratch.ptr, d_J.ptr, nrec, f,
                                          {d_weight.ptr, nt, windowed ? d_weight.ptr + nrec : nullptr}, nullptr)));
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const double gJ = d_J.host()[0];
      EXPECT_EQ(std::memcmp(&J, &gJ, sizeof J), 0) << "trace misfit, " << what << ": " << J << " vs " << gJ;
      EXPECT_TRUE(same_bits(res, d_res.host())) << "trace misfit's adjoint source, " << what;
    }
}
#endif

TEST(CudaDevice, PropagationKernelsSameBitsAsCpuFloat) {
  SKIP_WITHOUT_DEVICE();
#ifdef STARWAVE_USE_CUDA
  compare_all_orders<float>();
#endif
}

TEST(CudaDevice, PropagationKernelsSameBitsAsCpuDouble) {
  SKIP_WITHOUT_DEVICE();
#ifdef STARWAVE_USE_CUDA
  compare_all_orders<double>();
#endif
}

TEST(CudaDevice, PropagationKernelsSameBitsAsCpuIn3D) {
  SKIP_WITHOUT_DEVICE();
#ifdef STARWAVE_USE_CUDA
  compare_3d<float>();
  compare_3d<double>();
#endif
}

TEST(CudaDevice, MisfitImageReduceSameBitsAsCpu) {
  SKIP_WITHOUT_DEVICE();
#ifdef STARWAVE_USE_CUDA
  compare_imaging_kernels<float>();
  compare_imaging_kernels<double>();
#endif
}

/// A grid taller than a 2-D launch holds (gridDim.y ≤ 65535 blocks of 8 rows) runs: the
/// launches are 1-D. A launch's failure (here the work arrays' memset, given no memory) is
/// returned with its name, nothing is launched after it, and the device stays usable.
TEST(CudaDevice, RefusedLaunchIsReportedWithItsName) {
  SKIP_WITHOUT_DEVICE();
#ifdef STARWAVE_USE_CUDA
  ShotProblem<float> p;
  p.set_grid(65535 * 8 + 1, 1, 4, 1, 2);
  p.nsteps = 3;
  p.nt = 4;
  p.dz = p.dx = 1;
  DeviceArray<float> medium(p.medium_size()), work(p.work_size()), source(std::size_t(4));
  p.nsrc = 1;
  std::vector<long> host_nodes(p.nodes_size());
  fill_nodes(host_nodes.data(), PointNodes{{0}, {1.0}}, {}, p.rows(), [&](int r) { return p.row_offset(r, 0); });
  DeviceArray<long> nodes(host_nodes);
  p.attach_medium(medium.ptr);
  p.attach_nodes(nodes.ptr);
  p.attach_signals(source.ptr);
  p.work = work.ptr;
  const cuda::Status tall = cuda::forward<2, float>(p, nullptr);
  EXPECT_TRUE(bool(tall)) << (tall.launch ? tall.launch : "") << ": " << cuda::error_string(tall.code);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  p.work = nullptr;
  const cuda::Status st = cuda::forward<2, float>(p, nullptr);
  EXPECT_FALSE(bool(st));
  ASSERT_NE(st.launch, nullptr);
  EXPECT_EQ(std::string(st.launch), "memset of the work arrays");
  EXPECT_NE(st.code, int(cudaSuccess));
  EXPECT_GT(std::strlen(cuda::error_string(st.code)), 0u);
  std::printf("refused launch: %s: %s\n", st.launch, cuda::error_string(st.code));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "the refusal leaves the device usable";
#endif
}

/// The starwave beside this test (a bundle made by ../shared/gpu/pack keeps them in one
/// folder), else the build tree's.
std::string starwave_binary() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    const std::string beside = std::string(dirname(self)) + "/starwave";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return STARWAVE_BIN;
}

/// A fault that leaves the device unusable (here a write through a null pointer in the
/// forward task) surfaces in StarPU's driver thread after the launches: the run still ends
/// with one line naming it, exit 1, and no output file (not StarPU's assertion and abort).
TEST(CudaDevice, DeviceFaultEndsTheRunWithOneLine) {
  SKIP_WITHOUT_DEVICE();
  const std::string dir = "/tmp/starwave-device-fault-" + std::to_string(getpid()), bin = starwave_binary();
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string quiet = " >/dev/null 2>&1";
  ASSERT_EQ(
      std::system((bin + " synth --kind layered --nz 40 --nx 60 --spacing 10 --out " + dir + "/vp.h5" + quiet).c_str()),
      0);
  ASSERT_EQ(std::system((bin + " survey --model " + dir + "/vp.h5 --nshots 2 --dt 0.002 --t-max 0.3 --out " + dir +
                         "/s.h5" + quiet)
                            .c_str()),
            0);
  const std::string err = dir + "/stderr";
  const int raw = std::system(("STARWAVE_TEST_FAIL_TASK=forward-on-device STARPU_NCPU=0 STARPU_SILENT=1 " + bin +
                               " model --model " + dir + "/vp.h5 --survey " + dir + "/s.h5 --out " + dir +
                               "/d.h5 >/dev/null 2>" + err)
                                  .c_str());
  std::string text;
  if (FILE* f = std::fopen(err.c_str(), "r")) {
    char buf[4096];
    for (std::size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, k);
    std::fclose(f);
  }
  std::printf("device fault: exit %d, stderr: %s", WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, text.c_str());
  EXPECT_TRUE(WIFEXITED(raw)) << "ended by a signal, not an exit";
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 1);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("CUDA error in"), std::string::npos) << text;
  EXPECT_NE(text.find("illegal"), std::string::npos) << text;
  EXPECT_NE(access((dir + "/d.h5").c_str(), F_OK), 0) << "no output file";
  std::system(("rm -rf " + dir).c_str());
}

struct Case {
  Model truth, model;
  Survey survey;
};

Case imaging_case() {
  SynthOptions so;
  so.kind = "marmousi-like";
  so.nz = 40;
  so.nx = 90;
  so.spacing = 10;
  Case c;
  c.truth = synthesize(so);
  c.model = smoothed(c.truth, 60);
  SurveyOptions sv;
  sv.nshots = 7;
  sv.receiver_every = 3;
  sv.frequency = 12;
  sv.dt = 2e-3;
  sv.t_max = 0.4;
  c.survey = regular_survey(c.truth, sv);
  return c;
}

/// Modeled data, a gradient, an RTM image, Born data and LSRTM's normal product through StarPU
/// on CPU workers only, on CUDA workers only (one and four per GPU; the plan's choice: the
/// modelling's shots in batches with one worker a GPU; every workflow's in batches of 3; one a
/// task), and on both: the same bits.
TEST(CudaDevice, WorkflowsSameBitsOnCpuCudaAndBoth) {
  SKIP_WITHOUT_DEVICE();
  Case c = imaging_case();
  struct Workers {
    int ncpus, ncuda, per_gpu;
    const char* name;
    const char* batch;  // STARWAVE_SHOT_BATCH (null: the plan's; `model` batches with one CUDA worker a GPU)
  };
  const std::vector<Workers> mixes{{2, 0, 1, "CPU only", "1"},
                                   {0, 1, 1, "CUDA only", nullptr},
                                   {0, 1, 4, "CUDA only, 4 workers per GPU", nullptr},
                                   {3, 1, 2, "CPU + CUDA", nullptr},
                                   {0, 1, 1, "CUDA only, batches of 3 shots", "3"},
                                   {0, 1, 1, "CUDA only, one shot a task", "1"}};
  for (bool dbl : {false, true}) {
    NumericalOptions o;
    o.precision = dbl ? Precision::kDouble : Precision::kSingle;
    std::vector<float> data[6];
    std::vector<double> born[6];
    ImagingResult grad[6], rtm[6], normal[6];
    std::vector<double> dv(c.truth.vp.size());
    for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = c.truth.vp[i] - c.model.vp[i];
    for (std::size_t k = 0; k < mixes.size(); ++k) {
      RuntimeOptions ro;
      ro.ncpus = mixes[k].ncpus;
      ro.ncuda = mixes[k].ncuda;
      ro.workers_per_gpu = mixes[k].per_gpu;
      ro.scheduler = "eager";  // every worker takes shots, whatever the perf models say
      Runtime rt(ro);
      if (mixes[k].batch)
        setenv("STARWAVE_SHOT_BATCH", mixes[k].batch, 1);
      else
        unsetenv("STARWAVE_SHOT_BATCH");
      data[k] = model_shots(c.truth, c.survey, o, nullptr);
      c.survey.data = data[k];
      grad[k] = misfit_gradient(c.model, c.survey, o);
      rtm[k] = rtm_stack(c.model, c.survey, o);  // ISIC's sums and the receiver illumination
      unsetenv("STARWAVE_SHOT_BATCH");
      born[k] = born_shots_exact(c.model, dv, c.survey, o);
      normal[k] = normal_product(c.model, c.survey, o, dv);  // LSRTM's: J (born_keep) then Jᵀ
      c.survey.data = data[0];
    }
    for (std::size_t k = 1; k < mixes.size(); ++k) {
      const std::string what = std::string(dbl ? "double" : "float") + ", " + mixes[k].name;
      EXPECT_TRUE(same_bits(data[0], data[k]))
          << "modeled data, " << what << ": " << first_difference(data[0], data[k]);
      EXPECT_EQ(std::memcmp(&grad[0].misfit, &grad[k].misfit, sizeof(double)), 0)
          << "misfit, " << what << ": " << grad[0].misfit << " vs " << grad[k].misfit;
      EXPECT_TRUE(same_bits(grad[0].values, grad[k].values))
          << "gradient, " << what << ": " << first_difference(grad[0].values, grad[k].values);
      EXPECT_TRUE(same_bits(grad[0].illumination, grad[k].illumination)) << "illumination, " << what;
      EXPECT_TRUE(same_bits(rtm[0].values, rtm[k].values))
          << "image, " << what << ": " << first_difference(rtm[0].values, rtm[k].values);
      EXPECT_TRUE(same_bits(rtm[0].receiver_illumination, rtm[k].receiver_illumination))
          << "receiver illumination, " << what;
      EXPECT_TRUE(same_bits(born[0], born[k])) << "Born data, " << what << ": " << first_difference(born[0], born[k]);
      EXPECT_TRUE(same_bits(normal[0].values, normal[k].values))
          << "Jᵀ W J δv, " << what << ": " << first_difference(normal[0].values, normal[k].values);
    }
    EXPECT_GT(norm(born[0]), 0);
    EXPECT_GT(norm(grad[0].values), 0);
  }
}

}  // namespace
}  // namespace starwave::test
