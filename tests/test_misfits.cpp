// tests/test_misfits.cpp — the trace misfits (kernels/misfit_trace.hpp): the Hilbert
// transform and its transpose, each adjoint source against its misfit's derivative, what each
// misfit forgives, the CUDA launches' order giving the host's bits, and the whole gradient's
// Taylor test (slope 2, edge-reaching perturbations, 2-D and 3-D) through the task graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/misfit_trace.hpp"
#include "src/base/error.hpp"
#include "src/runtime/runtime.hpp"
#include "src/workflows/data_fit.hpp"
#include "src/workflows/gradient.hpp"
#include "src/workflows/modeling.hpp"
#include "tests/adjoint_fixture.hpp"
#include "tests/helpers.hpp"

namespace starwave::test {
namespace {

using imaging::Misfit;

const Misfit kTraceMisfits[] = {Misfit::kNormalized, Misfit::kCorrelation, Misfit::kEnvelope};

std::string name_of(Misfit f) {
  return f == Misfit::kL2            ? "L2"
         : f == Misfit::kNormalized  ? "Normalized"
         : f == Misfit::kCorrelation ? "Correlation"
                                     : "Envelope";
}

std::vector<double> twiddles(long n) { return imaging::fft_twiddles(n); }

TEST(MisfitMath, UnitRootsAgreeWithLibm) {
  for (long n : {4L, 8L, 16L, 64L, 1024L, 65536L})
    for (long k = 0; k < n; k += std::max(1L, n / 64) + (n > 64 ? 3 : 0)) {
      double c, s;
      imaging::unit_root(k, n, c, s);
      const double x = 2 * M_PI * double(k) / double(n);
      EXPECT_NEAR(c, std::cos(x), 1e-15) << k << " / " << n;
      EXPECT_NEAR(s, std::sin(x), 1e-15) << k << " / " << n;
    }
}

TEST(MisfitMath, HilbertTurnsCosinesIntoSinesAndItsTransposeIsMinusItself) {
  const long n = 256;
  const std::vector<double> tw = twiddles(n);
  std::vector<double> z(std::size_t(2 * n));
  for (long t = 0; t < n; ++t) {
    z[std::size_t(2 * t)] = std::cos(2 * M_PI * 5 * double(t) / double(n));
    z[std::size_t(2 * t + 1)] = std::cos(2 * M_PI * 9 * double(t) / double(n) + 0.3);
  }
  imaging::hilbert(z.data(), n, tw.data());
  for (long t = 0; t < n; ++t) {
    EXPECT_NEAR(z[std::size_t(2 * t)], std::sin(2 * M_PI * 5 * double(t) / double(n)), 1e-13);
    EXPECT_NEAR(z[std::size_t(2 * t + 1)], std::sin(2 * M_PI * 9 * double(t) / double(n) + 0.3), 1e-13);
  }
  // ⟨Hx, y⟩ = −⟨x, Hy⟩ for any real x, y: the envelope's adjoint source rests on it.
  std::mt19937 rng(7);
  std::normal_distribution<double> g;
  std::vector<double> x(std::size_t(2 * n), 0.0), y(std::size_t(2 * n), 0.0);
  for (long t = 0; t < n; ++t) {
    x[std::size_t(2 * t)] = g(rng);
    y[std::size_t(2 * t)] = g(rng);
  }
  std::vector<double> hx = x, hy = y;
  imaging::hilbert(hx.data(), n, tw.data());
  imaging::hilbert(hy.data(), n, tw.data());
  double a = 0, b = 0, scale = 0;
  for (long t = 0; t < n; ++t) {
    a += hx[std::size_t(2 * t)] * y[std::size_t(2 * t)];
    b += x[std::size_t(2 * t)] * hy[std::size_t(2 * t)];
    scale += std::abs(hx[std::size_t(2 * t)] * y[std::size_t(2 * t)]);
  }
  EXPECT_NEAR(a, -b, 1e-13 * scale);
  EXPECT_GT(std::abs(a), 1e-3 * scale) << "a test that could fail";
}

/// nrec traces of nt samples: a Ricker-like pulse per trace, moved and scaled by trace.
std::vector<double> pulses(long nrec, long nt, double shift, double f) {
  std::vector<double> d(std::size_t(nrec * nt));
  for (long r = 0; r < nrec; ++r)
    for (long t = 0; t < nt; ++t) {
      const double a = M_PI * f * (double(t) - 0.4 * double(nt) - shift - 2.0 * double(r));
      d[std::size_t(r * nt + t)] = (1 + 0.3 * double(r)) * (1 - 2 * a * a) * std::exp(-a * a);
    }
  return d;
}

struct Traces {
  long nrec, nt;
  std::vector<double> syn;
  std::vector<float> obs, weight;
  std::vector<float> window = {};  // nrec × 3 (imaging::window_taper), empty: none
};

double phi(const Traces& c, Misfit f, const std::vector<double>& syn, std::vector<double>* adjoint = nullptr) {
  std::vector<double> res(syn.size()), scratch(std::size_t(imaging::misfit_scratch_size(f, c.nrec, c.nt)));
  const double v = imaging::misfit_traces(
      syn.data(), c.obs.data(), res.data(), scratch.data(), c.nrec, c.nt, f,
      imaging::TraceWeights{c.weight.data(), c.nt, c.window.empty() ? nullptr : c.window.data()});
  if (adjoint) *adjoint = res;
  return v;
}

/// `floors`: one observed trace under the correlation's floor, one synthetic trace at its ε.
Traces some_traces(bool floors = true) {
  Traces c{6, 75, {}, {}, {1, 0.5f, 0, 2, 1, 1}};  // a dead trace, weights other than 1
  c.syn = pulses(c.nrec, c.nt, 0, 0.06);
  const std::vector<double> o = pulses(c.nrec, c.nt, 3.5, 0.05);
  c.obs.assign(o.begin(), o.end());
  for (long r = 0; r < c.nrec; ++r) c.obs[std::size_t(r * c.nt + 10)] += 0.2f;  // not a scaled copy
  for (long t = 0; t < c.nt && floors; ++t) {
    c.obs[std::size_t(5 * c.nt + t)] *= 1e-5f;  // under the correlation's floor: left out
    c.syn[std::size_t(4 * c.nt + t)] *= 1e-3;   // at its floor ε: the floor's terms count
  }
  return c;
}

/// Windows of several widths and tapers over some_traces(): one cutting its pulse, one with no
/// taper, one past the record's end.
std::vector<float> some_windows() { return {20, 40, 8, 10, 30, 0, 25.5f, 50, 12.5f, 60, 90, 10, 5, 70, 3, 0, 74, 20}; }

TEST(MisfitMath, EachAdjointSourceIsItsMisfitsDerivative) {
  for (bool windowed : {false, true}) {
    Traces c = some_traces();
    if (windowed) c.window = some_windows();
    std::mt19937 rng(3);
    std::normal_distribution<double> g;
    for (Misfit f : kTraceMisfits) {
      std::vector<double> adjoint;
      const double p0 = phi(c, f, c.syn, &adjoint);
      EXPECT_GT(p0, 0) << name_of(f);
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<double> d(c.syn.size());  // relative to each trace's size: the weak one's too
        for (long r = 0; r < c.nrec; ++r) {
          double rms = 0;
          for (long t = 0; t < c.nt; ++t) rms += c.syn[std::size_t(r * c.nt + t)] * c.syn[std::size_t(r * c.nt + t)];
          rms = std::sqrt(rms / double(c.nt));
          for (long t = 0; t < c.nt; ++t) d[std::size_t(r * c.nt + t)] = rms * g(rng);
        }
        double predicted = 0;
        for (std::size_t i = 0; i < d.size(); ++i) predicted += adjoint[i] * d[i];
        const double e = 1e-7;
        std::vector<double> up = c.syn, down = c.syn;
        for (std::size_t i = 0; i < d.size(); ++i) {
          up[i] += e * d[i];
          down[i] -= e * d[i];
        }
        const double measured = (phi(c, f, up) - phi(c, f, down)) / (2 * e);
        EXPECT_NEAR(predicted, measured, 1e-6 * std::abs(measured))
            << name_of(f) << ", trial " << trial << (windowed ? ", windowed" : "");
        for (long t = 0; t < c.nt; ++t) EXPECT_EQ(adjoint[std::size_t(2 * c.nt + t)], 0.0) << "a dead trace's";
        for (long t = 0; t < 12 && windowed; ++t)  // outside trace 0's window and taper: nothing
          EXPECT_EQ(adjoint[std::size_t(t)], 0.0) << name_of(f) << ", sample " << t;
      }
    }
  }
}

TEST(MisfitMath, EachMisfitForgivesWhatItSays) {
  Traces c = some_traces(false);
  const std::vector<double> s = c.syn;
  auto with_obs = [&](auto&& make) {
    Traces x = c;
    for (long r = 0; r < c.nrec; ++r)
      for (long t = 0; t < c.nt; ++t) x.obs[std::size_t(r * c.nt + t)] = float(make(r, t));
    return x;
  };
  auto at = [&](long r, long t) { return s[std::size_t(r * c.nt + t)]; };
  // Each trace scaled by its own factor: the correlation sees no difference (what is left is
  // its floor ε's, as with the synthetic traces themselves observed), the shot-normalised L2 does.
  const Traces exact = with_obs([&](long r, long t) { return at(r, t); });
  const double floor = phi(exact, Misfit::kCorrelation, s);
  const Traces traces_scaled = with_obs([&](long r, long t) { return (0.3 + 0.7 * double(r)) * at(r, t); });
  EXPECT_NEAR(phi(traces_scaled, Misfit::kCorrelation, s), floor, 1e-12);
  EXPECT_LT(floor, imaging::kCorrelationFloor * 5.5);  // Σ w = 5.5, each trace's share below ε² / ‖s_r‖²
  EXPECT_GT(phi(traces_scaled, Misfit::kNormalized, s), 1e-3);
  // The whole shot scaled: neither sees it; the L2 does.
  const Traces shot_scaled = with_obs([&](long r, long t) { return 2.7 * at(r, t); });
  EXPECT_LT(phi(shot_scaled, Misfit::kNormalized, s), 1e-12);
  EXPECT_NEAR(phi(shot_scaled, Misfit::kCorrelation, s), floor, 1e-12);
  // The wavelet's phase rotated by 60°: the envelope barely moves; the L2 and correlation do.
  const long n = imaging::envelope_fft_length(c.nt);
  const std::vector<double> tw = twiddles(n);
  std::vector<double> rotated(s.size());
  for (long r = 0; r < c.nrec; ++r) {
    std::vector<double> z(std::size_t(2 * n), 0.0);
    for (long t = 0; t < c.nt; ++t) z[std::size_t(2 * t)] = at(r, t);
    imaging::hilbert(z.data(), n, tw.data());
    for (long t = 0; t < c.nt; ++t)
      rotated[std::size_t(r * c.nt + t)] = std::cos(M_PI / 3) * at(r, t) + std::sin(M_PI / 3) * z[std::size_t(2 * t)];
  }
  const Traces phase = with_obs([&](long r, long t) { return rotated[std::size_t(r * c.nt + t)]; });
  std::vector<double> res(s.size());
  std::vector<double> scratch(std::size_t(imaging::kMisfitBlocks));
  const double l2 = imaging::misfit_fixed_order(s.data(), phase.obs.data(), res.data(), long(s.size()),
                                                imaging::Mode::kGradient, imaging::TraceWeights{c.weight.data(), c.nt});
  EXPECT_LT(phi(phase, Misfit::kEnvelope, s), 1e-3 * l2);
  EXPECT_GT(phi(phase, Misfit::kCorrelation, s), 0.2);
}

TEST(DataSelection, OffsetsWeighTracesWithATaperAndRefuseAnEmptySelection) {
  Survey s;
  s.dim = 2;
  s.dt = 1e-3;
  s.nt = 10;
  s.sources = {Position{10, 1000}, Position{10, 3000}};
  std::vector<Position> rec;
  for (int k = 0; k <= 40; ++k) rec.push_back(Position{10, 100.0 * k});
  s.receivers = {rec};
  s.wavelets = {std::vector<float>(10, 1.0f)};
  s.weights = std::vector<float>(rec.size(), 0.5f);
  s.weights[3] = 0;                                    // a dead trace stays dead
  const Survey sel = offset_selected(s, {500, 1500});  // a taper over 100 m outside
  ASSERT_EQ(sel.weights.size(), 2 * rec.size());
  for (int shot = 0; shot < 2; ++shot)
    for (std::size_t k = 0; k < rec.size(); ++k) {
      const double offset = std::abs(rec[k].x - s.sources[std::size_t(shot)].x);
      const float w = sel.trace_weights(shot)[k], given = k == 3 ? 0.0f : 0.5f;
      if (offset >= 500 && offset <= 1500) {
        EXPECT_EQ(w, given) << shot << ", " << k;
      } else if (offset <= 400 || offset >= 1600) {
        EXPECT_EQ(w, 0.0f) << shot << ", " << k;
      }
    }
  // Offset 450 m (half the ramp): cos²(π/4) of the weight.
  Survey half = s;
  half.receivers = {{Position{10, 1450}}};
  half.weights = {};
  EXPECT_NEAR(offset_selected(half, {500, 1500}).trace_weights(0)[0], 0.5, 1e-6);
  EXPECT_THROW(offset_selected(s, {5000, 6000}), InputError);
  EXPECT_EQ(parse_offsets("0,1500:100,3000", 2), (std::vector<OffsetRange>{{0, 1500}, {100, 3000}}));
  EXPECT_EQ(offsets_text(parse_offsets("0,1500.5", 3)), "0,1500.5");
  for (const char* bad : {"1500,0", "-1,10", "0,1500:0,2000", "0;1500", "", "0,1e400", "0,10x"})
    EXPECT_THROW(parse_offsets(bad, 3), InputError) << bad;
}

TEST(DataSelection, WindowsTaperSmoothlyAroundTheArrivalsAndRefuseBadInput) {
  const float win[] = {10, 20, 4};  // samples 10 … 20, a taper of 4 samples
  EXPECT_EQ(imaging::window_taper(win, 10), 1.0);
  EXPECT_EQ(imaging::window_taper(win, 20), 1.0);
  EXPECT_EQ(imaging::window_taper(win, 8), 0.5);  // half the taper: (1 − ½)²(1 + 1)
  EXPECT_EQ(imaging::window_taper(win, 22), 0.5);
  EXPECT_EQ(imaging::window_taper(win, 6), 0.0);
  EXPECT_EQ(imaging::window_taper(win, 30), 0.0);
  const float fine[] = {0, 0, 1000};  // flat at both ends: small steps from 1 and into 0
  EXPECT_GT(imaging::window_taper(fine, -1), 1 - 1e-5);
  EXPECT_LT(imaging::window_taper(fine, -999), 1e-5);
  for (long t = -1000; t < 0; ++t) EXPECT_LE(imaging::window_taper(fine, t), imaging::window_taper(fine, t + 1));

  const TimeWindow w = parse_window("0.05,0.3", 0);
  EXPECT_EQ(w.before, 0.05);
  EXPECT_EQ(w.after, 0.3);
  EXPECT_EQ(w.taper, 0.25 * (0.05 + 0.3));
  EXPECT_EQ(parse_window("0,0.2,0.01", 2000).velocity, 2000);
  EXPECT_EQ(window_text(parse_window("0,0.2,0.01", 2000)), "0,0.20000000000000001,0.01 at 2000 m/s");
  for (const char* bad : {"0.3", "a,b", "-0.1,0.2", "0.1,0", "0.1,0.2,-1", "0.1,0.2,0.1,0.1", "0.1;0.2", "0.1,1e999"})
    EXPECT_THROW(parse_window(bad, 0), InputError) << bad;
  EXPECT_THROW(parse_window("0.1,0.2", -5), InputError);
  EXPECT_THROW(parse_window("0.1,0.2", std::nan("")), InputError);

  Survey s;  // two shots, receivers every 100 m; the wavelet's onset at sample 3
  s.dim = 2;
  s.dt = 1e-3;
  s.nt = 500;
  s.sources = {Position{0, 1000}, Position{0, 3000}};
  std::vector<Position> rec;
  for (int k = 0; k <= 40; ++k) rec.push_back(Position{0, 100.0 * k});
  s.receivers = {rec};
  s.wavelets = {std::vector<float>(500, 0.0f)};
  s.wavelets[0][3] = -0.5f;
  s.wavelets[0][4] = 1.0f;
  s.weights = std::vector<float>(rec.size(), 1.0f);
  s.weights[5] = 0;
  EXPECT_EQ(first_arrival(s.wavelets[0].data(), 500), 3);
  EXPECT_EQ(first_arrival(std::vector<float>(9, 0.0f).data(), 9), -1);
  EXPECT_THROW(check_window(parse_window("0.2,0.3", 0), s), InputError);  // 0.5 s: the whole record
  check_window(parse_window("0.2,0.29", 0), s);
  const TimeWindow at = parse_window("0.01,0.05,0.02", 10000);
  const std::vector<double> arrivals = velocity_arrivals(s, at);
  ASSERT_EQ(arrivals.size(), 2 * rec.size());
  EXPECT_NEAR(arrivals[0], 0.1 + 0.003, 1e-12);                // 1000 m at 10 km/s, the onset
  EXPECT_NEAR(arrivals[rec.size() + 30], 0.0 + 0.003, 1e-12);  // shot 2's receiver at its source
  const Survey sel = windowed(s, at, arrivals);
  const std::vector<float> shot0 = sel.trace_windows(0);
  ASSERT_EQ(shot0.size(), 3 * rec.size());
  EXPECT_NEAR(shot0[0], 93, 1e-3);   // (0.103 − 0.01) / dt
  EXPECT_NEAR(shot0[1], 153, 1e-3);  // (0.103 + 0.05) / dt
  EXPECT_NEAR(shot0[2], 20, 1e-3);
  EXPECT_THROW(windowed(s, at, std::vector<double>(arrivals.size(), 0.6)), InputError);  // after the record
  std::vector<double> none(arrivals.size(), -1.0);
  none[5] = 0.1;  // the dead trace's only
  EXPECT_THROW(windowed(s, at, none), InputError);
  none[6] = 0.1;
  const Survey one = windowed(s, at, none);
  const imaging::TraceWeights tw{nullptr, 500, one.windows.data()};
  for (long t = 0; t < 500; t += 7) EXPECT_EQ(tw.taper(0, t), 0.0) << "a trace without an arrival compares nothing";
  EXPECT_EQ(tw.taper(6, 100), 1.0);
}

/// The CUDA launches' order (kernels/cuda/misfit_image.cu): the twiddles by index, the traces'
/// sums and adjoint sources a trace a thread (here in reverse, as any schedule may run them),
/// the envelopes kEnvelopeTraces at a time, the sums over traces by one thread.
template <typename T>
void device_order_gives_host_bits(bool windowed) {
  const long nrec = imaging::kEnvelopeTraces + 9, nt = 131;  // two envelope launches
  std::vector<T> syn(std::size_t(nrec * nt));
  std::vector<float> obs(syn.size()), weight(static_cast<std::size_t>(nrec));
  for (std::size_t i = 0; i < syn.size(); ++i) {
    syn[i] = T(std::sin(0.01 * double(i)) * std::exp(-0.001 * double(i % std::size_t(nt))));
    obs[i] = float(std::cos(0.013 * double(i)));
  }
  for (long r = 0; r < nrec; ++r) weight[std::size_t(r)] = r % 7 == 3 ? 0.0f : 0.5f + float(r % 3);
  std::vector<float> window;
  for (long r = 0; r < nrec; ++r) window.insert(window.end(), {float(r % 40) - 3.5f, float(r % 40 + 50), float(r % 6)});
  const imaging::TraceWeights w{weight.data(), nt, windowed ? window.data() : nullptr};
  for (Misfit f : kTraceMisfits) {
    const long size = imaging::misfit_scratch_size(f, nrec, nt);
    std::vector<T> res_host(syn.size()), res_dev(syn.size());
    std::vector<double> s_host(static_cast<std::size_t>(size)), s_dev(static_cast<std::size_t>(size));
    const double host = imaging::misfit_traces(syn.data(), obs.data(), res_host.data(), s_host.data(), nrec, nt, f, w);
    const imaging::TraceScratch at = imaging::trace_scratch(f, nrec, nt);
    double* sd = s_dev.data();
    if (f == Misfit::kEnvelope) {
      for (long k = at.fft / 2 - 1; k >= 0; --k)
        imaging::unit_root(k, at.fft, sd[at.twiddles() + 2 * k], sd[at.twiddles() + 2 * k + 1]);
      for (long first = 0; first < nrec; first += imaging::kEnvelopeTraces)
        for (long r = std::min(nrec, first + imaging::kEnvelopeTraces) - 1; r >= first; --r)
          sd[at.value(r)] = imaging::trace_envelope(syn.data(), obs.data(), res_dev.data(), sd + at.twiddles(),
                                                    sd + at.work(r % imaging::kEnvelopeTraces), at, w, r);
    } else {
      for (long r = nrec - 1; r >= 0; --r) imaging::trace_sums(syn.data(), obs.data(), w, r, sd + at.sums(r));
      imaging::shot_totals(sd, at, w);
      for (long r = nrec - 1; r >= 0; --r)
        sd[at.value(r)] = imaging::trace_normalized(syn.data(), obs.data(), res_dev.data(), sd, at, f, w, r);
    }
    const double dev = imaging::sum_trace_values(sd, at);
    EXPECT_EQ(std::memcmp(&host, &dev, sizeof host), 0) << name_of(f) << ": " << host << " vs " << dev;
    EXPECT_TRUE(same_bits(res_host, res_dev)) << name_of(f);
    EXPECT_GT(host, 0) << name_of(f);
  }
}

TEST(MisfitMath, TheDevicesOrderGivesTheHostsBits) {
  for (bool windowed : {false, true}) {
    device_order_gives_host_bits<float>(windowed);
    device_order_gives_host_bits<double>(windowed);
  }
}

RuntimeOptions cpus(int n, const std::string& sched = "") {
  RuntimeOptions ro;
  ro.ncpus = n;
  ro.ncuda = 0;
  if (!sched.empty()) ro.scheduler = sched;
  return ro;
}

/// Φ and ∂Φ/∂v through the task graph (a Runtime running), misfit f.
ImagingResult evaluate(const Model& m, const Survey& sv, const NumericalOptions& o, Misfit f) {
  GradientHooks hooks;
  hooks.misfit = f;
  return misfit_gradient(m, sv, o, hooks);
}

TEST(TraceMisfits, SameBitsForAnyWorkersAndScheduler) {
  const Model m = test_model(2);
  Model truth = m;
  for (double& v : truth.vp) v *= 1.04;
  NumericalOptions o;
  o.order = 4;
  o.pml_width = 10;
  Survey sv = test_survey(m, false);
  sv.sources.push_back(Position{50, 300});  // two shots: the sum over shots too
  {
    const Runtime rt(cpus(1));
    sv.data = model_shots(truth, sv, o, nullptr);
  }
  const Survey windows =
      windowed(sv, parse_window("0.01,0.08", 1500), velocity_arrivals(sv, parse_window("0.01,0.08", 1500)));
  for (Misfit f : {Misfit::kL2, Misfit::kNormalized, Misfit::kCorrelation, Misfit::kEnvelope})
    for (const Survey* x : {static_cast<const Survey*>(&sv), &windows}) {
      if (f == Misfit::kL2 && x == &sv) continue;  // the L2's bits: tests/test_graph.cpp
      ImagingResult a, b;
      {
        const Runtime rt(cpus(1));
        a = evaluate(m, *x, o, f);
      }
      {
        const Runtime rt(cpus(2, "dmda"));
        b = evaluate(m, *x, o, f);
      }
      const std::string what = name_of(f) + (x == &windows ? ", windowed" : "");
      EXPECT_GT(a.misfit, 0) << what;
      EXPECT_EQ(std::memcmp(&a.misfit, &b.misfit, sizeof a.misfit), 0) << what;
      EXPECT_TRUE(same_bits(a.values, b.values)) << what;
    }
}

struct TaylorCase {
  Misfit misfit;
  int dim;
  bool offsets = false;  // the traces weighted by an offset range (--offsets), tapers included
  bool window = false;   // each trace windowed around its arrival (--window), tapers included
};

class TraceMisfitTaylor : public ::testing::TestWithParam<TaylorCase> {};

TEST_P(TraceMisfitTaylor, TheGradientPredictsTheMisfitToSecondOrderEdgesIncluded) {
  const int dim = GetParam().dim;
  const Model m = test_model(dim);
  Model truth = m;
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x) truth.at(z, y, x) *= 1.0 + 0.03 * std::sin(0.3 * z + 0.2 * x + 0.1 * y);
  NumericalOptions o;
  o.order = 8;
  o.pml_width = dim == 3 ? 6 : 10;
  o.precision = Precision::kDouble;
  Survey sv = test_survey(m, false);
  o.internal_dt = choose_time_step(truth, sv, o).dt;
  o.pml_velocity = truth.vmax();
  const Runtime rt(cpus(1));
  sv.data = model_shots(truth, sv, o, nullptr);
  if (GetParam().offsets) sv = offset_selected(sv, {40, 150});  // tapers over 11 m: receivers in them
  const Survey whole = sv;
  if (GetParam().window) {  // a window cutting into each trace's direct wave, tapers on both sides
    const TimeWindow w = parse_window("0.004,0.03,0.01", 2000);
    sv = windowed(sv, w, velocity_arrivals(sv, w));
    long cut = 0, tapered = 0;
    for (int shot = 0; shot < sv.nshots(); ++shot) {
      const std::vector<float> win = sv.trace_windows(shot);
      const imaging::TraceWeights tw{nullptr, long(sv.nt), win.data()};
      for (long r = 0; r < sv.nrec(); ++r)
        for (long t = 0; t < long(sv.nt); ++t) {
          cut += tw.taper(r, t) == 0 ? 1 : 0;
          tapered += tw.taper(r, t) > 0 && tw.taper(r, t) < 1 ? 1 : 0;
        }
    }
    EXPECT_GT(cut, 0) << "samples left out";
    EXPECT_GT(tapered, 0) << "samples in the tapers";
  }
  // Every edge moves (a uniform shift and ramps towards the sides), and a bump inside.
  std::vector<double> dv(m.vp.size());
  for (int z = 0; z < m.nz; ++z)
    for (int y = 0; y < m.ny; ++y)
      for (int x = 0; x < m.nx; ++x)
        dv[std::size_t(m.index(z, y, x))] = 0.6 + 0.4 * x / (m.nx - 1) - 0.3 * z / (m.nz - 1) +
                                            (m.ny > 1 ? 0.2 * y / (m.ny - 1) : 0) +
                                            std::exp(-(std::pow(z - m.nz / 2.0, 2) + std::pow(x - m.nx / 2.0, 2)) / 8);
  const Misfit f = GetParam().misfit;
  const ImagingResult r0 = evaluate(m, sv, o, f);
  if (GetParam().window) {
    const double all = evaluate(m, whole, o, f).misfit;
    EXPECT_GT(std::abs(r0.misfit - all), 0.01 * all) << "the windows leave out some of the data's misfit";
  }
  double slope = 0;
  for (std::size_t i = 0; i < dv.size(); ++i) slope += r0.values[i] * dv[i];
  std::vector<double> r1, r2;
  // Under the sanitizers the sweep's last four steps alone (h = 1/16 … 1/128: the same code
  // in every evaluation, the remainder's slope over three halvings); Release sweeps from h = 1.
  for (double h = kSanitized ? 1.0 / 16 : 1; h > 1.0 / 256; h /= 2) {
    Model mh = m;
    for (std::size_t i = 0; i < dv.size(); ++i) mh.vp[i] += h * dv[i];
    const double J = evaluate(mh, sv, o, f).misfit;
    r1.push_back(std::abs(J - r0.misfit));
    r2.push_back(std::abs(J - r0.misfit - h * slope));
  }
  for (std::size_t k = 1; k < r1.size(); ++k)
    EXPECT_NEAR(std::log2(r2[k - 1] / r2[k]), 2.0, 0.05) << "second-order remainder, halving " << k;
  EXPECT_LT(r2.back(), 0.01 * r1.back()) << "the gradient predicts the first-order change";
}

INSTANTIATE_TEST_SUITE_P(
    Misfits, TraceMisfitTaylor,
    ::testing::Values(TaylorCase{Misfit::kNormalized, 2}, TaylorCase{Misfit::kCorrelation, 2},
                      TaylorCase{Misfit::kEnvelope, 2}, TaylorCase{Misfit::kNormalized, 3},
                      TaylorCase{Misfit::kCorrelation, 3}, TaylorCase{Misfit::kEnvelope, 3},
                      TaylorCase{Misfit::kL2, 2, true}, TaylorCase{Misfit::kCorrelation, 2, true},
                      TaylorCase{Misfit::kEnvelope, 3, true}, TaylorCase{Misfit::kL2, 2, false, true},
                      TaylorCase{Misfit::kNormalized, 2, false, true}, TaylorCase{Misfit::kCorrelation, 2, false, true},
                      TaylorCase{Misfit::kEnvelope, 2, false, true}, TaylorCase{Misfit::kL2, 3, false, true},
                      TaylorCase{Misfit::kNormalized, 3, false, true}, TaylorCase{Misfit::kCorrelation, 3, false, true},
                      TaylorCase{Misfit::kEnvelope, 3, false, true}),
    [](const ::testing::TestParamInfo<TaylorCase>& i) {
      return name_of(i.param.misfit) + std::to_string(i.param.dim) + "D" + (i.param.offsets ? "Offsets" : "") +
             (i.param.window ? "Window" : "");
    });

}  // namespace
}  // namespace starwave::test
