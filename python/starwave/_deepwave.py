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
import warnings

import numpy as np
import torch

from ._autograd import born, model

IGNORE_LOCATION = -1 << 31

# Deepwave's options that starwave does not model, with the value that means "not used".
_UNSUPPORTED = {
    "forward_callback": None,
    "backward_callback": None,
    "callback_frequency": 1,
}
_PYTHON_BACKENDS = (False, True, "eager", "jit", "compile")
_WAVEFIELDS = ("wavefield_0", "wavefield_m1", "psiz_m1", "psiy_m1", "psix_m1", "zetaz_m1", "zetay_m1", "zetax_m1")
# scalar takes the initial wavefields; scalar_born neither them nor the scattered field's.
_UNSUPPORTED_BORN = dict(_UNSUPPORTED, **{k: None for k in _WAVEFIELDS}, survey_pad=None, origin=None,
                         wavefield_sc_0=None, wavefield_sc_m1=None, psiz_sc_m1=None,
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


def _accepted(python_backend, storage_compression, model_gradient_sampling_interval):
    """Deepwave's options that change nothing starwave computes, checked (a warning says so where one is set);
    the engine's options they imply."""
    if not any(python_backend is b or (isinstance(b, str) and python_backend == b) for b in _PYTHON_BACKENDS):
        _fail("python_backend must be False, True, 'eager', 'jit' or 'compile' (got %r)" % (python_backend,))
    if python_backend is not False:
        warnings.warn("%s: python_backend=%r is accepted; starwave's own engine runs either way"
                      % (_CALL[0], python_backend), stacklevel=3)
    interval = model_gradient_sampling_interval
    if isinstance(interval, (bool, np.bool_)) or not isinstance(interval, (int, np.integer)) or interval < 1:
        _fail("model_gradient_sampling_interval must be a whole number ≥ 1 (got %r)" % (interval,))
    if interval != 1:
        warnings.warn("%s: model_gradient_sampling_interval=%d is accepted; starwave computes the exact gradient "
                      "(every time step) whatever the interval" % (_CALL[0], interval), stacklevel=3)
    if not isinstance(storage_compression, (bool, np.bool_)):
        _fail("storage_compression must be True or False (got %r)" % (storage_compression,), TypeError)
    return {"store_compression": "bf16" if storage_compression else "none"}


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


def _whole(x):
    """A whole number of cells: not a bool (True is no width), whatever holds it."""
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, torch.Tensor) and x.dtype == torch.bool):
        raise TypeError("a bool")
    return operator.index(x)


def _pml_width(pml_width, ndim):
    try:
        widths = [_whole(pml_width)] * (2 * ndim)
    except TypeError:
        try:
            widths = [_whole(w) for w in pml_width]
        except TypeError:
            widths = []
    if len(widths) != 2 * ndim or not all(w >= 0 for w in widths):
        _fail("pml_width must be a whole number of cells ≥ 0 or %d of them (got %r)" % (2 * ndim, pml_width))
    return widths  # each side's: low and high along each of v's axes (the engine's order too)


def _engine_width(widths):
    """The engine's pml_width: one number when every side has it (the same bits either way)."""
    return widths[0] if len(set(widths)) == 1 else widths


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


def _shots(model, v, h, inner_dt, wavelets, src, rec, samples, start=None, keep_end=False, **options):
    """One engine shot a row of `wavelets` (its source at cell `src`, its receivers' cells `rec`):
    ([shots, nrec, samples] traces, [shots, 2 + 2·ndim, *grid] end states or None). The record is
    lengthened with silence where the engine asks for one a wave can cross a cell in; with `start`
    (the shots' initial states) or `keep_end`, by one inner step (the state after the last sample's
    step, as Deepwave's), and a record too short for that has no end state (with `start`: refused)."""
    fastest = float(v.detach().max())
    shortest = math.ceil(min(h) / (inner_dt * fastest)) + 2
    states = start is not None or keep_end
    if states and samples + 1 < shortest:
        if start is not None:
            _fail("a record of %d inner steps is too short for starwave's engine to start from initial wavefields "
                  "(it needs %d: a wave must cross a cell)" % (samples, shortest - 1), NotImplementedError)
        states = False
    longer = samples + 1 if states else max(samples, 2, shortest)
    wavelet = -math.prod(h) * wavelets.cpu()  # −(cell volume)·s, a tensor: its gradient reaches the amplitudes
    wavelet = torch.nn.functional.pad(wavelet, (0, longer - samples))
    where = lambda cells: (cells.to(torch.float64) * torch.tensor(h, dtype=torch.float64)).numpy()  # noqa: E731
    if states:
        options = dict(options, initial_state=start, final_state=True)
    try:
        out = model(v, h, inner_dt, wavelet, where(src), where(rec), internal_dt=inner_dt, **options)
    except ValueError as e:
        if "internal_dt" not in str(e):
            raise
        _fail("max_vel = %g m/s, below v's largest value %g, makes the inner step unstable (%s)"
              % (options["pml_velocity"], fastest, e))
    data, end = out if states else (out, None)
    return data[..., :samples], end


_STATE_NAMES = {2: ("wavefield_0", "wavefield_m1", "psiy_m1", "psix_m1", "zetay_m1", "zetax_m1"),
                3: ("wavefield_0", "wavefield_m1", "psiz_m1", "psiy_m1", "psix_m1", "zetaz_m1", "zetay_m1",
                    "zetax_m1")}


def _initial_states(states, shots, grid, v):
    """Deepwave's initial wavefields (a dict name → tensor or None) as one [shot, 2 + 2·ndim, *grid] tensor of
    v's dtype (the ones not given zero), or None when none is given."""
    names = _STATE_NAMES[len(grid)]
    unused = [k for k, x in states.items() if x is not None and k not in names]
    if unused:
        _fail("%s is not a wavefield of a %d-D model (%s are)" % (unused[0], len(grid), ", ".join(names)))
    if all(states.get(k) is None for k in names):
        return None
    parts = []
    for k in names:
        x = states.get(k)
        if x is None:
            parts.append(torch.zeros((shots, *grid), dtype=v.dtype, device=v.device))
            continue
        if not isinstance(x, torch.Tensor):
            _fail("%s must be a torch.Tensor" % k, TypeError)
        if list(x.shape) != [shots, *grid]:
            _fail("%s has shape %s; expected %s (the shots, the model with its absorbing layers: starwave takes "
                  "wavefields over the whole padded model only)" % (k, list(x.shape), [shots, *grid]),
                  NotImplementedError if x.ndim == len(grid) + 1 else ValueError)
        if not bool(torch.isfinite(x.detach()).all()):
            _fail("%s holds NaN or Inf" % k)
        parts.append(x.to(dtype=v.dtype, device=v.device))
    return torch.stack(parts, dim=1)


def _survey_region(v, source_locations, receiver_locations, states, survey_pad, origin, pml_width):
    """Deepwave's `survey_pad` and `origin`: the part of v the survey propagates in — the box of the
    locations widened by survey_pad on each side (None: to the model's edge), or the initial
    wavefields' box from `origin` — as (v cut to it, the locations moved into it). The model
    outside it takes no part (its gradient is zero there, as Deepwave's)."""
    if survey_pad is not None and origin is not None:
        _fail("survey_pad and origin cannot both be given")
    located = [x for x in (source_locations, receiver_locations) if isinstance(x, torch.Tensor) and x.numel()]
    ndim = located[0].shape[-1] if located else v.ndim
    shape = list(v.shape[-ndim:])
    width = _pml_width(pml_width, ndim)
    if origin is not None:
        given = [x for x in states.values() if isinstance(x, torch.Tensor)]
        if not given:
            _fail("origin places the initial wavefields: give one")
        try:
            lo = [operator.index(o) for o in origin]
        except TypeError:
            lo = []
        if len(lo) != ndim:
            _fail("origin must be %d whole numbers (got %r)" % (ndim, origin))
        hi = [lo[d] + given[0].shape[1 + d] - width[2 * d] - width[2 * d + 1] - 1 for d in range(ndim)]
    else:
        try:
            pads = [survey_pad] * (2 * ndim) if not isinstance(survey_pad, (list, tuple)) else list(survey_pad)
            pads = [None if p is None else operator.index(p) for p in pads]
        except TypeError:
            pads = []
        if len(pads) != 2 * ndim or any(p is not None and p < 0 for p in pads):
            _fail("survey_pad must be a whole number ≥ 0 or %d of them (None: to the model's edge; got %r)"
                  % (2 * ndim, survey_pad))
        cells = torch.cat([x.reshape(-1, ndim) for x in located]) if located else torch.zeros(0, ndim, dtype=torch.long)
        cells = cells[(cells != IGNORE_LOCATION).all(dim=1)]
        lo, hi = [0] * ndim, [n - 1 for n in shape]
        for d in range(ndim):
            if len(cells) and pads[2 * d] is not None:
                lo[d] = max(0, int(cells[:, d].min()) - pads[2 * d])
            if len(cells) and pads[2 * d + 1] is not None:
                hi[d] = min(shape[d] - 1, int(cells[:, d].max()) + pads[2 * d + 1])
    if any(lo[d] < 0 or hi[d] >= shape[d] or hi[d] < lo[d] for d in range(ndim)):
        _fail("the survey's region %s … %s is not inside the model of shape %s" % (lo, hi, shape))
    region = v[(Ellipsis,) + tuple(slice(lo[d], hi[d] + 1) for d in range(ndim))]
    offset = torch.tensor(lo)

    def moved(x):
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            return x
        kept = (x != IGNORE_LOCATION).all(dim=-1, keepdim=True)
        return torch.where(kept, x - offset.to(x.device), x)
    return region, moved(source_locations), moved(receiver_locations)


def scalar(v, grid_spacing, dt, source_amplitudes=None, source_locations=None, receiver_locations=None, accuracy=4,
           pml_width=20, pml_freq=None, max_vel=None, *, nt=None, freq_taper_frac=0.0, time_pad_frac=0.0,
           time_taper=False, storage_mode="device", storage_path=".", storage_compression=False,
           python_backend=False, model_gradient_sampling_interval=1, **options):
    """Deepwave 0.0.27's `scalar` (help(starwave.torch) and docs/python.md say what differs)."""
    _CALL[0] = "starwave.torch.scalar"
    states = {k: options.pop(k) for k in list(options) if k in _WAVEFIELDS}
    survey_pad, origin = options.pop("survey_pad", None), options.pop("origin", None)
    _check_unsupported(options)
    engine_options = _accepted(python_backend, storage_compression, model_gradient_sampling_interval)
    if survey_pad is not None or origin is not None:
        v, source_locations, receiver_locations = _survey_region(v, source_locations, receiver_locations, states,
                                                                 survey_pad, origin, pml_width)
    ndim, traces, ends = _propagate(model, v, grid_spacing, dt, source_amplitudes, source_locations,
                                    receiver_locations, accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac,
                                    time_pad_frac, time_taper, storage_mode, engine_options, per_shot_models=True,
                                    states=states, keep_end=True)
    return (tuple(ends) if ends is not None else (None,) * (2 + 2 * ndim)) + (traces,)


def scalar_born(v, scatter, grid_spacing, dt, source_amplitudes=None, source_locations=None, receiver_locations=None,
                bg_receiver_locations=None, accuracy=4, pml_width=20, pml_freq=None, max_vel=None, *, nt=None,
                freq_taper_frac=0.0, time_pad_frac=0.0, time_taper=False, storage_mode="device", storage_path=".",
                storage_compression=False, python_backend=False, model_gradient_sampling_interval=1, **options):
    """Deepwave 0.0.27's `scalar_born`: the scattered receiver data last, the background's (at
    `bg_receiver_locations`) before them (help(starwave.torch) and docs/python.md say what differs)."""
    _CALL[0] = "starwave.torch.scalar_born"
    _check_unsupported(options, _UNSUPPORTED_BORN)
    engine_options = _accepted(python_backend, storage_compression, model_gradient_sampling_interval)
    if not isinstance(scatter, torch.Tensor) or not isinstance(v, torch.Tensor) or scatter.shape != v.shape:
        _fail("scatter must be a torch.Tensor of v's shape (the velocity perturbation, m/s)", TypeError)
    if not bool(torch.isfinite(scatter.detach()).all()):
        _fail("scatter holds NaN or Inf: the perturbation must be finite")
    if bg_receiver_locations is not None and not isinstance(bg_receiver_locations, torch.Tensor):
        _fail("bg_receiver_locations must be a torch.Tensor of cell indices, like receiver_locations", TypeError)

    def engine(x, *args, **kwargs):  # Deepwave pads the scatter with zeros: the layers carry none
        return born(x, scatter.to(device=x.device, dtype=x.dtype).reshape(x.shape), *args, layers=False, **kwargs)

    ndim, traces, _ = _propagate(engine, v, grid_spacing, dt, source_amplitudes, source_locations,
                                 receiver_locations, accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac,
                                 time_pad_frac, time_taper, storage_mode, engine_options)
    background = torch.empty(0, dtype=v.dtype, device=v.device)
    if bg_receiver_locations is not None and bg_receiver_locations.numel():
        _, background, _ = _propagate(model, v, grid_spacing, dt, source_amplitudes, source_locations,
                                   bg_receiver_locations, accuracy, pml_width, pml_freq, max_vel, nt, freq_taper_frac,
                                   time_pad_frac, time_taper, storage_mode, engine_options)
    return (None,) * (2 * (2 + 2 * ndim)) + (background, traces)  # the final wavefields: not returned


def _propagate(engine, v, grid_spacing, dt, source_amplitudes, source_locations, receiver_locations, accuracy,
               pml_width, pml_freq, max_vel, nt, freq_taper_frac, time_pad_frac, time_taper, storage_mode,
               engine_options, per_shot_models=False, states=None, keep_end=False):
    """Deepwave's call checked and run through `engine` (starwave.torch.model or born, given
    `engine_options` too): (ndim, the receiver data [shot, receiver, time] at `dt`, the final
    wavefields). With `per_shot_models`, v of shape [shot, ...] is a model per shot: each shot runs
    on its own, all at the inner step and absorbing layers of the largest velocity of them all (or
    max_vel). `states`: Deepwave's initial wavefields by name (starwave.torch.model's engine only);
    `keep_end`: the final wavefields, a list in Deepwave's order (else None)."""
    states = states or {}
    if not isinstance(v, torch.Tensor) or v.dtype not in (torch.float32, torch.float64):
        _fail("v must be a float32 or float64 torch.Tensor", TypeError)
    if (source_amplitudes is None) != (source_locations is None):
        _fail("source_amplitudes and source_locations go together: one was given without the other")
    if isinstance(source_amplitudes, torch.Tensor) and source_amplitudes.is_floating_point() and not bool(
            torch.isfinite(source_amplitudes.detach()).all()):
        _fail("source_amplitudes holds NaN or Inf: the wavelets must be finite")
    if not bool(torch.isfinite(v.detach()).all()):
        bad = (~torch.isfinite(v.detach())).nonzero()[0].tolist()
        _fail("v holds NaN or Inf (at index %s): velocities must be finite" % bad)
    if not bool((v.detach() > 0).all()):
        bad = (v.detach() <= 0).nonzero()[0].tolist()
        _fail("v holds %g m/s at index %s: velocities must be positive" % (float(v.detach()[tuple(bad)]), bad))
    given = [x for x in states.values() if isinstance(x, torch.Tensor)]
    located = [x for x in (source_locations, receiver_locations) if isinstance(x, torch.Tensor) and x.ndim == 3]
    ndim = located[0].shape[-1] if located else v.ndim
    if isinstance(source_amplitudes, torch.Tensor) and source_amplitudes.ndim:
        shots = source_amplitudes.shape[0]
    elif located or given:
        shots = (located or given)[0].shape[0]
    else:
        _fail("source_amplitudes, receiver_locations or an initial wavefield is needed (they say the shots)")
    if v.ndim == ndim + 1 and v.shape[0] == 1:  # one model for every shot
        v = v[0]
    elif v.ndim == ndim + 1 and v.shape[0] == shots and shots > 0:
        if not per_shot_models:
            _fail("a model per shot (v of shape [shot, ...]) is not supported", NotImplementedError)
        fastest = float(v.detach().abs().max()) if max_vel is None else max_vel
        kept = lambda x, i: x if x is None or x.numel() == 0 else x[i:i + 1]  # noqa: E731
        runs = [_propagate(engine, v[i], grid_spacing, dt, kept(source_amplitudes, i), kept(source_locations, i),
                           kept(receiver_locations, i), accuracy, pml_width, pml_freq, fastest, nt, freq_taper_frac,
                           time_pad_frac, time_taper, storage_mode, engine_options,
                           states={k: kept(x, i) for k, x in states.items()}, keep_end=keep_end)
                for i in range(shots)]
        traces = [r[1] for r in runs]
        ends = None if any(r[2] is None for r in runs) else [torch.cat(c) for c in zip(*[r[2] for r in runs])]
        return ndim, torch.cat(traces) if all(d.numel() for d in traces) else traces[0], ends
    if v.ndim != ndim or ndim not in (2, 3):
        _fail("v has %d dimensions (shape %s) and the locations %d (their last axis): a %d-D model needs [shot, n, %d] "
              "locations (2-D and 3-D models are supported)" % (v.ndim, list(v.shape), ndim, v.ndim, v.ndim),
              NotImplementedError if v.ndim == ndim else ValueError)
    order, frequency = _numbers(accuracy, pml_freq, freq_taper_frac, time_pad_frac, time_taper, storage_mode)
    h = _spacing(grid_spacing, ndim)
    width = _pml_width(pml_width, ndim)
    grid = [n + width[2 * d] + width[2 * d + 1] for d, n in enumerate(v.shape)]
    if source_amplitudes is not None:
        if not isinstance(source_amplitudes, torch.Tensor) or source_amplitudes.ndim != 3:
            _fail("source_amplitudes must be a torch.Tensor [shot, source, time]", TypeError)
        if source_amplitudes.dtype != v.dtype or source_amplitudes.device != v.device:
            _fail("source_amplitudes must have v's dtype and device (%s on %s)" % (v.dtype, v.device))
        _, nsrc, steps = source_amplitudes.shape
        if nt is not None and nt != steps:
            _fail("nt = %r differs from source_amplitudes' %d samples" % (nt, steps))
        src, src_kept = _locations("source_locations", source_locations, shots, ndim, v.shape)
        if src.shape[1] != nsrc:
            _fail("source_locations has %d sources a shot, source_amplitudes %d" % (src.shape[1], nsrc))
    else:
        if nt is None:
            _fail("nt (the number of time samples) is needed without source_amplitudes")
        steps = operator.index(nt)
        src, src_kept = torch.zeros((shots, 0, ndim), dtype=torch.long), torch.zeros((shots, 0), dtype=torch.bool)
    fastest = float(v.detach().abs().max()) if max_vel is None else abs(float(max_vel))
    inner_dt, ratio = _inner_step(float(dt), h, fastest)
    start = _initial_states(states, shots, grid, v)
    receivers = receiver_locations is not None and receiver_locations.numel() > 0
    if receivers:
        rec, rec_kept = _locations("receiver_locations", receiver_locations, shots, ndim, v.shape)
    else:  # the engine records somewhere; nothing is returned
        rec, rec_kept = torch.zeros((shots, 1, ndim), dtype=torch.long), torch.zeros((shots, 1), dtype=torch.bool)

    # One engine shot per kept (shot, source) — and, for a shot without one, a silent shot that
    # carries its initial wavefields —, their traces and final states summed into Deepwave's shots
    # (the propagation is linear in the sources and the initial state: the shot's first engine
    # shot starts from its initial state, the others from rest); all of it torch operations on
    # the engine's output, so that autograd reaches v through them.
    pairs = src_kept.nonzero()
    if start is not None:
        alone = [i for i in range(shots) if not bool(src_kept[i].any())]
        pairs = torch.cat([pairs, torch.tensor([[i, -1] for i in alone], dtype=torch.long).reshape(-1, 2)])
        pairs = pairs[torch.argsort(pairs[:, 0] * (src.shape[1] + 1) + pairs[:, 1], stable=True)]
    traces = torch.zeros((shots, rec.shape[1], steps * ratio), dtype=v.dtype, device=v.device) + 0 * v.sum()
    ends = torch.zeros((shots, 2 + 2 * ndim, *grid), dtype=v.dtype, device=v.device) if keep_end else None
    if len(pairs) and steps > 0:
        amplitudes = upsample(source_amplitudes, ratio, freq_taper_frac, time_pad_frac, time_taper) \
            if source_amplitudes is not None else None
        real = pairs[:, 1] >= 0
        wavelets = torch.zeros((len(pairs), steps * ratio), dtype=v.dtype)
        cells = torch.zeros((len(pairs), ndim), dtype=torch.long)
        if bool(real.any()):  # torch operations: the amplitudes' gradient flows back through them
            wavelets = wavelets.index_put((real.nonzero()[:, 0],), amplitudes[pairs[real, 0], pairs[real, 1]].cpu())
            cells[real] = src[pairs[real, 0], pairs[real, 1]]
        first = torch.ones(len(pairs), dtype=torch.bool)
        first[1:] = pairs[1:, 0] != pairs[:-1, 0]
        initial = None if start is None else start[pairs[:, 0]] * first.to(v.dtype).reshape(-1, *[1] * (ndim + 1))
        data, end = _shots(engine, v, h, inner_dt, wavelets, cells, rec[pairs[:, 0]], steps * ratio, start=initial,
                           keep_end=keep_end, order=order, pml_width=_engine_width(width), pml_velocity=fastest,
                           pml_frequency=frequency, **engine_options)
        traces = traces.index_add(0, pairs[:, 0].to(v.device), data)
        if keep_end:
            ends = None if end is None else ends.index_add(0, pairs[:, 0].to(v.device), end)
    elif keep_end and start is not None:  # no time step: the wavefields as given
        ends = start
    traces = traces * rec_kept.unsqueeze(2).to(device=v.device, dtype=v.dtype)
    traces = downsample(traces, ratio, freq_taper_frac, time_pad_frac, time_taper)
    if not receivers:
        traces = torch.empty(0, dtype=v.dtype, device=v.device)
    return ndim, traces, None if ends is None else list(ends.unbind(1))


def _check_flag(name, value):
    if not isinstance(value, bool):
        raise TypeError("%s must be bool, got %s" % (name, type(value).__name__))


class Scalar(torch.nn.Module):
    """Deepwave 0.0.27's `Scalar` module: holds `v` (a Parameter) and `grid_spacing`."""

    def __init__(self, v, grid_spacing, v_requires_grad=False, storage_mode="device", storage_path=".",
                 storage_compression=False):
        super().__init__()
        if not isinstance(v, torch.Tensor):
            raise TypeError("starwave.torch.Scalar: v must be a torch.Tensor.")
        _check_flag("v_requires_grad", v_requires_grad)
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
        _check_flag("v_requires_grad", v_requires_grad)
        _check_flag("scatter_requires_grad", scatter_requires_grad)
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
