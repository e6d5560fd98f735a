// kernels/misfit_trace.hpp — the data misfits that compare whole traces (docs/design.md §3,
// "Misfits"): the shot-normalised L2, the traces' zero-lag normalised correlation and the
// envelope difference, each with its exact adjoint source. The per-trace math is shared by
// the misfit task's CPU loop and its CUDA kernels (a trace a thread), and every sum has one
// order, so both give the same bits. Pure: no StarPU, no I/O.
#pragma once

#include <cmath>
#include <vector>

#include "kernels/hd.hpp"
#include "kernels/misfit_image.hpp"

namespace starwave::imaging {

/// What a gradient's misfit Φ_s of one shot compares (s the synthetic, o the observed traces,
/// w_r the trace weights, ŝ = s / ‖s‖):
enum class Misfit : int {
  kL2 = 0,          // ½ Σ_r w_r Σ_t (s − o)²: amplitudes and the wavelet taken as exact
  kNormalized = 1,  // ½ Σ_r w_r Σ_t (s/‖s‖ − o/‖o‖)², ‖s‖² = Σ_r w_r Σ_t s² over the shot: forgives
                    // each shot's source strength, keeps the amplitudes' trend with offset
  kCorrelation = 2,  // Σ_r w_r (1 − s_r · ô_r / N_r), N_r = √(‖s_r‖² + ε²): each trace normalised
                     // alone (for ε = 0 the trace-normalised L2, ½‖ŝ_r − ô_r‖² = 1 − ŝ_r · ô_r):
                     // forgives every amplitude. ε² = kCorrelationFloor × the shot's mean
                     // synthetic trace energy Σ_r w_r ‖s_r‖² / Σ_r w_r keeps a trace with next to
                     // no synthetic energy (an arrival still outside the record) from ruling the
                     // gradient; an observed trace below the floor of the observed mean has no
                     // arrival to fit and is left out (as a dead one)
  kEnvelope = 3,     // ½ Σ_r w_r Σ_t (E[s] − E[o])², E[x] = √(x² + (Hx)²), H the Hilbert
                     // transform: forgives the wavelet's phase
};

/// The correlation's floors against the shot's mean trace energies (−60 dB).
constexpr double kCorrelationFloor = 1e-6;

/// Traces of one envelope launch (and so the workspace the misfit scratch holds for them).
constexpr long kEnvelopeTraces = 256;

/// The length of the envelope's FFT for traces of nt samples: the least power of two ≥ 2 nt.
SW_HD long envelope_fft_length(long nt) {
  long n = 2;
  while (n < 2 * nt) n *= 2;
  return n;
}

/// Where the trace misfits keep their values in the misfit task's scratch (doubles): per
/// trace its three sums (Σs², Σo², Σso) and its misfit, the shot's totals, and for the
/// envelope the FFT's twiddles (L/2 complex) and kEnvelopeTraces workspaces of 2L + nt.
struct TraceScratch {
  long nrec = 0, nt = 0, fft = 0;  // fft: L, 0 unless the envelope
  SW_HD long sums(long r) const { return 3 * r; }
  SW_HD long value(long r) const { return 3 * nrec + r; }
  // Σ w s², Σ w o², Σ w so, Σ w; the correlation's ε², K = Σ_r w_r (s_r·ô_r) / N_r³ and
  // observed floor
  SW_HD long totals() const { return 4 * nrec; }
  SW_HD long twiddles() const { return 4 * nrec + 8; }
  SW_HD long work(long slot) const { return twiddles() + fft + slot * (2 * fft + nt); }
  SW_HD long size() const { return work(fft > 0 ? kEnvelopeTraces : 0); }
};

inline TraceScratch trace_scratch(Misfit f, long nrec, long nt) {
  return {nrec, nt, f == Misfit::kEnvelope ? envelope_fft_length(nt) : 0};
}

/// Doubles the misfit task's scratch holds for misfit f (the L2's block sums at least).
inline long misfit_scratch_size(Misfit f, long nrec, long nt) {
  const long n = f == Misfit::kL2 ? 0 : trace_scratch(f, nrec, nt).size();
  return n > kMisfitBlocks ? n : kMisfitBlocks;
}

/// Trace r's Σ s², Σ o², Σ s·o (double, ascending t; s and o through the trace's window W)
/// into out[0 … 2].
template <typename T>
SW_HD void trace_sums(const T* syn, const float* obs, TraceWeights w, long r, double* out) {
  double ss = 0, oo = 0, so = 0;
  const long nt = w.nt;
  const T* s = syn + r * nt;
  const float* o = obs + r * nt;
  for (long t = 0; t < nt; ++t) {
    const double taper = w.taper(r, t), a = taper * double(s[t]), b = taper * double(o[t]);
    ss += a * a;
    oo += b * b;
    so += a * b;
  }
  out[0] = ss;
  out[1] = oo;
  out[2] = so;
}

/// The correlation's N_r = √(‖s_r‖² + ε²) and s_r · ô_r, from trace r's sums; false when
/// the trace's observed energy is not above `floor` or N_r = 0 (it then contributes nothing).
SW_HD bool correlation_terms(const double* sums, double eps2, double floor, double& n, double& p) {
  const double no = sqrt(sums[1]);
  n = sqrt(sums[0] + eps2);
  p = no > 0 ? sums[2] / no : 0.0;
  return sums[1] > floor && no > 0 && n > 0;
}

/// The shot's totals from the traces' sums, each in ascending r: Σ_r w_r (Σs², Σo², Σso),
/// Σ_r w_r, and for the correlation ε² and K.
SW_HD void shot_totals(double* scratch, const TraceScratch& at, TraceWeights w) {
  double t[4] = {0, 0, 0, 0};
  for (long r = 0; r < at.nrec; ++r) {
    const double wr = double(w.at(r * at.nt));
    for (int k = 0; k < 3; ++k) t[k] += wr * scratch[at.sums(r) + k];
    t[3] += wr;
  }
  const double eps2 = t[3] > 0 ? kCorrelationFloor * t[0] / t[3] : 0.0;
  const double floor = t[3] > 0 ? kCorrelationFloor * t[1] / t[3] : 0.0;
  double k = 0;
  for (long r = 0; r < at.nrec; ++r) {
    double n, p;
    if (correlation_terms(scratch + at.sums(r), eps2, floor, n, p)) k += double(w.at(r * at.nt)) * p / (n * n * n);
  }
  for (int j = 0; j < 4; ++j) scratch[at.totals() + j] = t[j];
  scratch[at.totals() + 4] = eps2;
  scratch[at.totals() + 5] = k;
  scratch[at.totals() + 6] = floor;
}

/// Trace r's adjoint source (its nt samples of `residual`) and misfit (returned) for the
/// misfit of the windowed traces W s and W o (the adjoint source W × the one below) by the
/// normalised L2 (w_r / ‖s‖ · (ŝ c − ô), c the shot's normalised correlation; nothing from a
/// shot without synthetic or observed energy) or the correlation (w_r [(P/N³ + ε²-term) s_r −
/// ô_r / N], P = s_r·ô_r, the ε²-term η K / Σw from ε²'s own dependence on every trace; a
/// trace whose observed energy is not above the floor adds no misfit, and that term alone).
template <typename T>
SW_HD double trace_normalized(const T* syn, const float* obs, T* residual, const double* scratch,
                              const TraceScratch& at, Misfit f, TraceWeights w, long r) {
  const long nt = at.nt;
  const double* q = f == Misfit::kNormalized ? scratch + at.totals() : scratch + at.sums(r);
  const double* tot = scratch + at.totals();
  const double wr = double(w.at(r * nt));
  const double no = sqrt(q[1]);
  const double ns = sqrt(q[0]);
  double n = 0, p = 0;
  const bool correlation = f == Misfit::kCorrelation;
  const bool live = correlation ? correlation_terms(q, tot[4], tot[6], n, p) : ns > 0 && no > 0;
  T* res = residual + r * nt;
  if (wr == 0 || (!live && !correlation)) {
    for (long t = 0; t < nt; ++t) res[t] = T(0);
    return 0;
  }
  const T* s = syn + r * nt;
  const float* o = obs + r * nt;
  if (correlation) {  // every weighted trace moves ε², so each takes its term (Σw > 0: wr > 0)
    const double floor_term = kCorrelationFloor * tot[5] / tot[3];
    const double gs = live ? p / (n * n * n) + floor_term : floor_term;
    for (long t = 0; t < nt; ++t) {
      const double taper = w.taper(r, t), st = taper * double(s[t]), ot = taper * double(o[t]);
      res[t] = sample_value<T>(taper * (live ? wr * (gs * st - ot / no / n) : wr * gs * st));
    }
    return live ? wr * (1.0 - p / n) : 0.0;
  }
  const double c = q[2] / (ns * no);
  double sum = 0;
  for (long t = 0; t < nt; ++t) {
    const double taper = w.taper(r, t), a = taper * double(s[t]) / ns, b = taper * double(o[t]) / no;
    res[t] = sample_value<T>(taper * (wr * (a * c - b) / ns));
    sum += (a - b) * (a - b);
  }
  return 0.5 * wr * sum;
}

/// cos and sin of 2π k / n (n a power of two ≥ 4, 0 ≤ k < n) by octant symmetry and Taylor
/// series on [0, π/4] in a fixed order: the same bits on every processor (no libm).
SW_HD void unit_root(long k, long n, double& c, double& s) {
  const long o = n / 8;  // an octant of k (n ≥ 8; n = 4 falls to exact quarter turns)
  long q = k / (n / 4), m = k % (n / 4);
  bool swap = false;
  if (n >= 8 && m > o) {
    m = n / 4 - m;
    swap = true;
  }
  const double x = 6.283185307179586476925 * double(m) / double(n), x2 = x * x;
  double cs = 1, sn = 1;  // Horner in x²: terms to x^22 (error below 1e-20 on [0, π/4])
  for (int j = 22; j >= 2; j -= 2) {
    cs = 1 - x2 / double(j * (j - 1)) * cs;
    sn = 1 - x2 / double((j + 1) * j) * sn;
  }
  sn *= x;
  if (swap) {
    const double t = cs;
    cs = sn;
    sn = t;
  }
  for (; q > 0; --q) {  // a quarter turn: (c, s) → (−s, c)
    const double t = cs;
    cs = -sn;
    sn = t;
  }
  c = cs;
  s = sn;
}

/// In-place radix-2 FFT of n complex values (re, im interleaved), sign −1 forward, +1
/// inverse (unscaled); `tw`: (cos, sin) of 2π k / n for k < n/2 (unit_root).
SW_HD void fft(double* z, long n, const double* tw, int sign) {
  for (long i = 1, j = 0; i < n; ++i) {  // bit reversal
    long bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const double a = z[2 * i], b = z[2 * i + 1];
      z[2 * i] = z[2 * j];
      z[2 * i + 1] = z[2 * j + 1];
      z[2 * j] = a;
      z[2 * j + 1] = b;
    }
  }
  for (long len = 2; len <= n; len *= 2) {
    const long half = len / 2, step = n / len;
    for (long i = 0; i < n; i += len)
      for (long k = 0; k < half; ++k) {
        const double wr = tw[2 * k * step], wi = sign * tw[2 * k * step + 1];
        double* a = z + 2 * (i + k);
        double* b = z + 2 * (i + k + half);
        const double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br;
        b[1] = a[1] - bi;
        a[0] += br;
        a[1] += bi;
      }
  }
}

/// z ← H z for n complex values (H real and linear, so H(x + iy) = Hx + iHy): the spectrum
/// times −i sign(k), its zero and Nyquist frequencies dropped. H's kernel is odd, so Hᵀ = −H.
SW_HD void hilbert(double* z, long n, const double* tw) {
  fft(z, n, tw, -1);
  z[0] = z[1] = z[n] = z[n + 1] = 0;
  for (long k = 1; k < n / 2; ++k) {  // −i (a + ib) = b − ia
    const double a = z[2 * k];
    z[2 * k] = z[2 * k + 1];
    z[2 * k + 1] = -a;
  }
  for (long k = n / 2 + 1; k < n; ++k) {  // i (a + ib) = −b + ia
    const double a = z[2 * k];
    z[2 * k] = -z[2 * k + 1];
    z[2 * k + 1] = a;
  }
  fft(z, n, tw, 1);
  const double scale = 1.0 / double(n);  // a power of two: exact
  for (long i = 0; i < 2 * n; ++i) z[i] *= scale;
}

/// Trace r's adjoint source and misfit for the envelope difference, in workspace `work`
/// (2L + nt doubles): with e = E[s] − E[o] and a = e / E[s] (0 where E[s] = 0, where s and
/// Hs vanish), ∂Φ/∂s = w_r (a s + Hᵀ(a Hs)) = w_r (a s − H(a Hs)); of the windowed traces
/// W s and W o, W × that.
template <typename T>
SW_HD double trace_envelope(const T* syn, const float* obs, T* residual, const double* tw, double* work,
                            const TraceScratch& at, TraceWeights w, long r) {
  const long nt = at.nt, n = at.fft;
  const double wr = double(w.at(r * nt));
  T* res = residual + r * nt;
  if (wr == 0) {
    for (long t = 0; t < nt; ++t) res[t] = T(0);
    return 0;
  }
  const T* s = syn + r * nt;
  const float* o = obs + r * nt;
  double* z = work;           // 2L: s + i o, then H of it; then a Hs, then H of that
  double* as = work + 2 * n;  // nt: a s
  for (long t = 0; t < n; ++t) {
    const double taper = t < nt ? w.taper(r, t) : 0.0;
    z[2 * t] = t < nt ? taper * double(s[t]) : 0.0;
    z[2 * t + 1] = t < nt ? taper * double(o[t]) : 0.0;
  }
  hilbert(z, n, tw);
  double sum = 0;
  for (long t = 0; t < nt; ++t) {
    const double taper = w.taper(r, t), st = taper * double(s[t]), hs = z[2 * t], ot = taper * double(o[t]),
                 ho = z[2 * t + 1];
    const double es = sqrt(st * st + hs * hs), eo = sqrt(ot * ot + ho * ho), e = es - eo;
    const double a = es > 0 ? e / es : 0.0;
    sum += e * e;
    as[t] = a * st;
    z[2 * t] = a * hs;
    z[2 * t + 1] = 0;
  }
  for (long t = nt; t < n; ++t) z[2 * t] = z[2 * t + 1] = 0;
  hilbert(z, n, tw);
  for (long t = 0; t < nt; ++t) res[t] = sample_value<T>(w.taper(r, t) * (wr * (as[t] - z[2 * t])));
  return 0.5 * wr * sum;
}

/// The host's table of fft()'s twiddles for n points (n/2 complex values: unit_root).
inline std::vector<double> fft_twiddles(long n) {
  std::vector<double> tw(static_cast<std::size_t>(n));
  for (long k = 0; k < n / 2; ++k) unit_root(k, n, tw[std::size_t(2 * k)], tw[std::size_t(2 * k + 1)]);
  return tw;
}

/// Φ_s = the traces' misfits summed in ascending r (one order on every processor).
SW_HD double sum_trace_values(const double* scratch, const TraceScratch& at) {
  double sum = 0;
  for (long r = 0; r < at.nrec; ++r) sum += scratch[at.value(r)];
  return sum;
}

/// One shot's trace misfit on the host, in the order the CUDA kernels keep: writes the
/// adjoint source (nrec × nt) and returns Φ_s; `scratch`: misfit_scratch_size doubles.
template <typename T>
double misfit_traces(const T* syn, const float* obs, T* residual, double* scratch, long nrec, long nt, Misfit f,
                     TraceWeights w) {
  const TraceScratch at = trace_scratch(f, nrec, nt);
  if (f == Misfit::kEnvelope) {
    for (long k = 0; k < at.fft / 2; ++k)
      unit_root(k, at.fft, scratch[at.twiddles() + 2 * k], scratch[at.twiddles() + 2 * k + 1]);
    for (long r = 0; r < nrec; ++r)
      scratch[at.value(r)] =
          trace_envelope(syn, obs, residual, scratch + at.twiddles(), scratch + at.work(r % kEnvelopeTraces), at, w, r);
  } else {
    for (long r = 0; r < nrec; ++r) trace_sums(syn, obs, w, r, scratch + at.sums(r));
    shot_totals(scratch, at, w);
    for (long r = 0; r < nrec; ++r) scratch[at.value(r)] = trace_normalized(syn, obs, residual, scratch, at, f, w, r);
  }
  return sum_trace_values(scratch, at);
}

}  // namespace starwave::imaging
