"""Deepwave 0.0.27's scalar and scalar Born calls on starwave's engine (starwave.torch.scalar,
starwave.torch.Scalar, starwave.torch.scalar_born, starwave.torch.ScalarBorn).

A call takes Deepwave's arguments and conventions and turns them into one starwave.torch.model
(or starwave.torch.born) call: cell indices become positions in m, the input interval `dt` is cut into Deepwave's inner
steps (Courant number 0.6 at `max_vel`) with the amplitudes band-limited-resampled in the
frequency domain, a source adds −v²Δt²·s to the field at its cell (starwave's point source with
the cell's volume folded in), and a receiver records the field at its cell before each step. The
resampling, the several sources of one shot and the ignored locations are torch operations, so
autograd differentiates through them into starwave's exact adjoint.
"""
import math
import operator

import numpy as np
import torch

from ._autograd import born, model

IGNORE_LOCATION = -1 << 31

# Deepwave's options that starwave does not model, with the value that means "not used".
_UNSUPPORTED = {
    "survey_pad": None,
    "wavefield_0": None,
    "wavefield_m1": None,
    "psiz_m1": None,
    "psiy_m1": None,
    "psix_m1": None,
    "zetaz_m1": None,
    "zetay_m1": None,
    "zetax_m1": None,
    "origin": None,
    "model_gradient_sampling_interval": 1,
    "forward_callback": None,
    "backward_callback": None,
    "callback_frequency": 1,
    "python_backend": False,
    "storage_compression": False,
}
# scalar_born's own: the scattered field's initial state.
_UNSUPPORTED_BORN = dict(_UNSUPPORTED, wavefield_sc_0=None, wavefield_sc_m1=None, psiz_sc_m1=None,
                         psiy_sc_m1=None, psix_sc_m1=None, zetaz_sc_m1=None, zetay_sc_m1=None, zetax_sc_m1=None)
_STORAGE_MODES = ("device", "cpu", "disk", "none")
_CALL = ["starwave.torch.scalar"]  # the call that is running, for its messages


def _fail(message, error=ValueError):
    raise error(_CALL[0] + ": " + message)


def _is_default(value, default):
    """Whether `value` is the option's "not used" value: None, or the same bool or whole number (an array or a
    tensor never is)."""
    if default is None:
        return value is None
    if isinstance(default, bool):
        return isinstance(value, (bool, np.bool_)) and bool(value) == default
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value == default


def _check_unsupported(options, unsupported=_UNSUPPORTED):
    for name, value in options.items():
        if name not in unsupported:
            _fail("unexpected keyword argument '%s'" % name, TypeError)
        default = unsupported[name]
        if _is_default(value, default):
            continue
        kind = "True or False" if isinstance(default, bool) else "a whole number" if default is not None else None
        if kind and not isinstance(value, (bool, np.bool_) if isinstance(default, bool) else (int, np.integer)):
            _fail("%s must be %s (got %s)" % (name, kind, type(value).__name__), TypeError)
        _fail("%s is not supported (starwave models the wave from rest, the whole model, each shot's sources "
              "and receivers, and plans its own memory)" % name, NotImplementedError)


def _hann(n, like):
    return torch.hann_window(n, periodic=False, dtype=like.dtype, device=like.device)


def _taper_top(spectrum, fraction):
    """The highest `fraction` of the frequencies cosine-tapered to zero; with no fraction, the Nyquist bin zeroed."""
    n = spectrum.shape[-1]
    k = int(fraction * n)
    weights = torch.ones(n, dtype=spectrum.real.dtype, device=spectrum.device)
    if k > 0:
        weights[n - k:] = (1 + torch.cos(math.pi * torch.arange(1, k + 1, device=spectrum.device) / k)) / 2
    elif fraction == 0 and n > 1:
        weights[-1] = 0
    return spectrum * weights


def upsample(signal, ratio, freq_taper_frac=0.0, time_pad_frac=0.0, time_taper=False):
    """`signal`'s last axis at `ratio` times the rate, with no frequency above the input's Nyquist."""
    if ratio == 1:
        return signal
    if signal.numel() == 0:
        return signal.new_zeros(signal.shape[:-1] + (signal.shape[-1] * ratio,))
    pad = int(time_pad_frac * signal.shape[-1])
    if pad:
        signal = torch.nn.functional.pad(signal, (0, pad))
    n = signal.shape[-1]
    spectrum = _taper_top(torch.fft.rfft(signal, norm="ortho"), freq_taper_frac) * math.sqrt(ratio)
    out = torch.fft.irfft(spectrum, n=n * ratio, norm="ortho")
    if pad:
        out = out[..., :out.shape[-1] - pad * ratio]
    return out * _hann(out.shape[-1], out) if time_taper else out


def downsample(signal, ratio, freq_taper_frac=0.0, time_pad_frac=0.0, time_taper=False):
    """`signal`'s last axis at 1/`ratio` of the rate, the frequencies above the new Nyquist removed first."""
    if ratio == 1:
        return signal
    if signal.numel() == 0:
        return signal.new_zeros(signal.shape[:-1] + (signal.shape[-1] // ratio,))
    if time_taper:
        signal = signal * _hann(signal.shape[-1], signal)
    pad = int(time_pad_frac * (signal.shape[-1] // ratio))
    if pad:
        signal = torch.nn.functional.pad(signal, (0, pad * ratio))
    n = signal.shape[-1] // ratio
    spectrum = _taper_top(torch.fft.rfft(signal, norm="ortho")[..., :n // 2 + 1], freq_taper_frac)
    out = torch.fft.irfft(spectrum, n=n, norm="ortho") / math.sqrt(ratio)
    return out[..., :out.shape[-1] - pad] if pad else out


def _locations(name, locations, shots, ndim, shape):
    """Integer [shot, n, ndim] cell indices checked against the model; (cells, kept mask)."""
    if not isinstance(locations, torch.Tensor) or locations.dtype != torch.long:
        _fail("%s must be a torch.long tensor [shot, n, %d] of cell indices" % (name, ndim), TypeError)
    if locations.ndim != 3 or locations.shape[0] != shots or locations.shape[2] != ndim:
        _fail("%s has shape %s; expected [%d, n, %d]" % (name, list(locations.shape), shots, ndim))
    cells = locations.detach().to("cpu")
    ignored = cells == IGNORE_LOCATION
    kept = ~ignored.all(dim=2)
    if (ignored.any(dim=2) & kept).any():
        _fail("%s: a location ignored in one dimension must be ignored in every dimension" % name)
    inside = ((cells >= 0) & (cells < torch.tensor(shape))).all(dim=2)
    if (kept & ~inside).any():
        bad = cells[kept & ~inside][0].tolist()
        _fail("%s: cell %s is outside the model of shape %s" % (name, bad, list(shape)))
    return cells.masked_fill(~kept.unsqueeze(2), 0), kept


def _spacing(grid_spacing, ndim):
    try:
        h = [float(grid_spacing)] * ndim
    except (TypeError, ValueError, RuntimeError):  # a sequence, an array or a tensor of several
        try:
            h = [float(x) for x in grid_spacing]
        except (TypeError, ValueError, RuntimeError):
            h = []
    if len(h) != ndim or not all(math.isfinite(x) and x > 0 for x in h):
        _fail("grid_spacing must be a positive number or %d of them (got %r)" % (ndim, grid_spacing))
    return h


def _pml_width(pml_width, ndim):
    try:
        widths = [operator.index(pml_width)] * (2 * ndim)
    except TypeError:
        try:
            widths = [operator.index(w) for w in pml_width]
        except TypeError:
            widths = []
    if len(widths) != 2 * ndim or not all(w >= 0 for w in widths):
        _fail("pml_width must be a whole number of cells ≥ 0 or %d of them (got %r)" % (2 * ndim, pml_width))
    if len(set(widths)) > 1:
        _fail("pml_width with different widths on different edges is not supported", NotImplementedError)
    return widths[0]


def _numbers(accuracy, pml_freq, freq_taper_frac, time_pad_frac, time_taper, storage_mode):
    """The scalar options checked: (order, the layers' frequency in Hz)."""
    if accuracy not in (2, 4, 6, 8):
        _fail("accuracy must be 2, 4, 6 or 8 (got %r)" % (accuracy,))
    for name, x in (("freq_taper_frac", freq_taper_frac), ("time_pad_frac", time_pad_frac)):
        if not (isinstance(x, (int, float)) and 0 <= x <= 1):
            _fail("%s must be a number in [0, 1] (got %r)" % (name, x))
    if not isinstance(time_taper, bool):
        _fail("time_taper must be True or False (got %r)" % (time_taper,), TypeError)
    if storage_mode not in _STORAGE_MODES:
        _fail("storage_mode must be one of %s (got %r)" % (", ".join(_STORAGE_MODES), storage_mode))
    frequency = 25.0 if pml_freq is None else float(pml_freq)
    if not (math.isfinite(frequency) and frequency >= 0):
        _fail("pml_freq must be a frequency ≥ 0 in Hz (got %r)" % (pml_freq,))
    return int(accuracy), max(frequency, 1e-12)  # 0 Hz: no α in the layers (starwave's 0 means "the wavelet's")


def _inner_step(dt, h, fastest):
    """Deepwave's inner step: dt cut into the fewest equal steps at Courant number 0.6 of `fastest`."""
    if not (math.isfinite(dt) and dt > 0 and math.isfinite(fastest) and fastest > 0):
        _fail("dt and max_vel (or v's largest value) must be positive (dt = %r, max_vel = %r)" % (dt, fastest))
    largest = 0.6 / math.sqrt(sum(1 / x ** 2 for x in h)) / (fastest ** 2 + 1e-15) * fastest
    ratio = math.ceil(dt / largest)
    if ratio > 10000:
        _fail("dt = %g s needs %d inner steps per sample at max_vel = %g m/s (dt in s, grid_spacing in m?)"
              % (dt, ratio, fastest))
    return dt / ratio, ratio


def _shots(model, v, h, inner_dt, wavelets, src, pairs, rec, samples, **options):
    """[len(pairs), nrec, samples] traces of one engine shot per (shot, source) pair: the record
    lengthened with silence where the engine asks for one a wave can cross a cell in."""
    fastest = float(v.detach().max())
    longer = max(samples, 2, math.ceil(min(h) / (inner_dt * fastest)) + 2)
    wavelet = -math.prod(h) * wavelets[pairs[:, 0], pairs[:, 1]].cpu().numpy()  # −(cell volume)·s
    wavelet = np.pad(wavelet, ((0, 0), (0, longer - samples)))
    where = lambda cells: (cells.to(torch.float64) * torch.tensor(h, dtype=torch.float64)).numpy()  # noqa: E731
    try:
        data = model(v, h, inner_dt, wavelet, where(src[pairs[:, 0], pairs[:, 1]]), where(rec[pairs[:, 0]]),
                     internal_dt=inner_dt, **options)
    except ValueError as e:
        if "internal_dt" not in str(e):
            raise
        _fail("max_vel = %g m/s, below v's largest value %g, makes the inner step unstable (%s)"
              % (options["pml_velocity"], fastest, e))
    return data[..., :samples]


def scalar(v, grid_spacing, dt, source_amplitudes=None, source_locations=None, receiver_locations=None, accuracy=4,
           pml_width=20, pml_freq=None, max_vel=None, *, nt=None, freq_taper_frac=0.0, time_pad_frac=0.0,
           time_taper=False, storage_mode="device", storage_path=".", **options):
    """Deepwave 0.0.27's `scalar` (help(starwave.torch) and docs/python.md say what differs)."""
    _CALL[0] = "starwave.torch.scalar"
    _check_unsupported(options)
    ndim, traces = _propagate(model, v, grid_spacing, dt, source_amplitudes, source_locations, receiver_locations,
                              accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac, time_pad_frac, time_taper,
                              storage_mode)
    return (None,) * (2 + 2 * ndim) + (traces,)  # the final wavefields: not returned


def scalar_born(v, scatter, grid_spacing, dt, source_amplitudes=None, source_locations=None, receiver_locations=None,
                bg_receiver_locations=None, accuracy=4, pml_width=20, pml_freq=None, max_vel=None, *, nt=None,
                freq_taper_frac=0.0, time_pad_frac=0.0, time_taper=False, storage_mode="device", storage_path=".",
                **options):
    """Deepwave 0.0.27's `scalar_born`: the scattered receiver data last, the background's (at
    `bg_receiver_locations`) before them (help(starwave.torch) and docs/python.md say what differs)."""
    _CALL[0] = "starwave.torch.scalar_born"
    _check_unsupported(options, _UNSUPPORTED_BORN)
    if not isinstance(scatter, torch.Tensor) or not isinstance(v, torch.Tensor) or scatter.shape != v.shape:
        _fail("scatter must be a torch.Tensor of v's shape (the velocity perturbation, m/s)", TypeError)
    if not bool(torch.isfinite(scatter.detach()).all()):
        _fail("scatter holds NaN or Inf: the perturbation must be finite")
    if v.requires_grad:
        _fail("the gradient with respect to v is not computed (a second derivative of the modelling): pass v "
              "without requires_grad; scatter's gradient is Jᵀ", NotImplementedError)

    def engine(x, *args, **kwargs):  # Deepwave pads the scatter with zeros: the layers carry none
        return born(x, scatter.to(device=x.device, dtype=x.dtype), *args, layers=False, **kwargs)

    ndim, traces = _propagate(engine, v, grid_spacing, dt, source_amplitudes, source_locations, receiver_locations,
                              accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac, time_pad_frac, time_taper,
                              storage_mode)
    background = torch.empty(0, dtype=v.dtype, device=v.device)
    if bg_receiver_locations is not None and bg_receiver_locations.numel():
        _, background = _propagate(model, v, grid_spacing, dt, source_amplitudes, source_locations,
                                   bg_receiver_locations, accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac,
                                   time_pad_frac, time_taper, storage_mode)
    return (None,) * (2 * (2 + 2 * ndim)) + (background, traces)  # the final wavefields: not returned


def _propagate(engine, v, grid_spacing, dt, source_amplitudes, source_locations, receiver_locations, accuracy,
               pml_width, pml_freq, max_vel, nt, freq_taper_frac, time_pad_frac, time_taper, storage_mode):
    """Deepwave's call checked and run through `engine` (starwave.torch.model or born): (ndim, the
    receiver data [shot, receiver, time] at `dt`)."""
    if not isinstance(v, torch.Tensor) or v.dtype not in (torch.float32, torch.float64):
        _fail("v must be a float32 or float64 torch.Tensor", TypeError)
    if source_amplitudes is None and source_locations is None:
        _fail("source_amplitudes and source_locations are needed (starwave models the wave from rest)",
              NotImplementedError)
    if source_amplitudes is None or source_locations is None:
        _fail("source_amplitudes and source_locations go together: one was given without the other")
    if not bool(torch.isfinite(v.detach()).all()):
        bad = (~torch.isfinite(v.detach())).nonzero()[0].tolist()
        _fail("v holds NaN or Inf (at index %s): velocities must be finite" % bad)
    ndim = source_locations.shape[-1] if isinstance(source_locations, torch.Tensor) else v.ndim
    shots = source_amplitudes.shape[0] if isinstance(source_amplitudes, torch.Tensor) and source_amplitudes.ndim else -1
    if v.ndim == ndim + 1 and v.shape[0] == shots:
        _fail("a model per shot (v of shape [shot, ...]) is not supported", NotImplementedError)
    if v.ndim != ndim or ndim not in (2, 3):
        _fail("v has %d dimensions (shape %s) and the locations %d (their last axis): a %d-D model needs [shot, n, %d] "
              "locations (2-D and 3-D models are supported)" % (v.ndim, list(v.shape), ndim, v.ndim, v.ndim),
              NotImplementedError if v.ndim == ndim else ValueError)
    order, frequency = _numbers(accuracy, pml_freq, freq_taper_frac, time_pad_frac, time_taper, storage_mode)
    h = _spacing(grid_spacing, ndim)
    width = _pml_width(pml_width, ndim)
    if not isinstance(source_amplitudes, torch.Tensor) or source_amplitudes.ndim != 3:
        _fail("source_amplitudes must be a torch.Tensor [shot, source, time]", TypeError)
    if source_amplitudes.dtype != v.dtype or source_amplitudes.device != v.device:
        _fail("source_amplitudes must have v's dtype and device (%s on %s)" % (v.dtype, v.device))
    if source_amplitudes.requires_grad:
        _fail("gradients with respect to source_amplitudes are not computed", NotImplementedError)
    shots, nsrc, steps = source_amplitudes.shape
    if nt is not None and nt != steps:
        _fail("nt = %r differs from source_amplitudes' %d samples" % (nt, steps))
    src, src_kept = _locations("source_locations", source_locations, shots, ndim, v.shape)
    if src.shape[1] != nsrc:
        _fail("source_locations has %d sources a shot, source_amplitudes %d" % (src.shape[1], nsrc))
    fastest = float(v.detach().abs().max()) if max_vel is None else abs(float(max_vel))
    inner_dt, ratio = _inner_step(float(dt), h, fastest)
    if receiver_locations is None or receiver_locations.numel() == 0:
        return ndim, torch.empty(0, dtype=v.dtype, device=v.device)
    rec, rec_kept = _locations("receiver_locations", receiver_locations, shots, ndim, v.shape)

    # One engine shot per kept (shot, source), their traces summed into Deepwave's shots; all of
    # it torch operations on the engine's output, so that autograd reaches v through them.
    pairs = src_kept.nonzero()
    traces = torch.zeros((shots, rec.shape[1], steps * ratio), dtype=v.dtype, device=v.device) + 0 * v.sum()
    if len(pairs) and steps > 0:
        wavelets = upsample(source_amplitudes.detach(), ratio, freq_taper_frac, time_pad_frac, time_taper)
        data = _shots(engine, v, h, inner_dt, wavelets, src, pairs, rec, steps * ratio, order=order,
                      pml_width=width, pml_velocity=fastest, pml_frequency=frequency)
        traces = traces.index_add(0, pairs[:, 0].to(v.device), data)
    traces = traces * rec_kept.unsqueeze(2).to(device=v.device, dtype=v.dtype)
    return ndim, downsample(traces, ratio, freq_taper_frac, time_pad_frac, time_taper)


class Scalar(torch.nn.Module):
    """Deepwave 0.0.27's `Scalar` module: holds `v` (a Parameter) and `grid_spacing`."""

    def __init__(self, v, grid_spacing, v_requires_grad=False, storage_mode="device", storage_path=".",
                 storage_compression=False):
        super().__init__()
        if not isinstance(v, torch.Tensor):
            raise TypeError("starwave.torch.Scalar: v must be a torch.Tensor")
        self.v = torch.nn.Parameter(v, requires_grad=bool(v_requires_grad))
        self.grid_spacing = grid_spacing
        self.storage = {"storage_mode": storage_mode, "storage_path": storage_path,
                        "storage_compression": storage_compression}

    def forward(self, dt, *args, **kwargs):
        return scalar(self.v, self.grid_spacing, dt, *args, **kwargs, **self.storage)


class ScalarBorn(torch.nn.Module):
    """Deepwave 0.0.27's `ScalarBorn` module: holds `v` and `scatter` (Parameters) and `grid_spacing`."""

    def __init__(self, v, scatter, grid_spacing, v_requires_grad=False, scatter_requires_grad=False,
                 storage_mode="device", storage_path=".", storage_compression=False):
        super().__init__()
        if not isinstance(v, torch.Tensor) or not isinstance(scatter, torch.Tensor):
            raise TypeError("starwave.torch.ScalarBorn: v and scatter must be torch.Tensors")
        self.v = torch.nn.Parameter(v, requires_grad=bool(v_requires_grad))
        self.scatter = torch.nn.Parameter(scatter, requires_grad=bool(scatter_requires_grad))
        self.grid_spacing = grid_spacing
        self.storage = {"storage_mode": storage_mode, "storage_path": storage_path,
                        "storage_compression": storage_compression}

    def forward(self, dt, *args, **kwargs):
        return scalar_born(self.v, self.scatter, self.grid_spacing, dt, *args, **kwargs, **self.storage)


def ricker(freq, length, dt, peak_time, dtype=None):
    """A Ricker wavelet of peak frequency `freq` (Hz): `length` samples at `dt` (s), peaking at `peak_time` (s)."""
    t = torch.arange(float(length), dtype=torch.float64) * dt - peak_time
    a = (math.pi * freq * t) ** 2
    y = (1 - 2 * a) * torch.exp(-a)
    return y.to(torch.get_default_dtype() if dtype is None else dtype)


def cosine_taper_end(signal, n_taper):
    """`signal`'s last `n_taper` samples (last axis) multiplied by a half cosine from 1 to 0, in place."""
    n = min(int(n_taper), signal.shape[-1])
    if n > 0:
        ramp = (1 + torch.cos(math.pi * torch.arange(1, n + 1, device=signal.device) / n)) / 2
        signal[..., -n:] *= ramp.to(signal.dtype)
    return signal
