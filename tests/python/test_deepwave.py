"""starwave.torch.scalar, Deepwave 0.0.27's call (pytest): agreement with Deepwave's own output on
the same inputs (data/deepwave-0.0.27.npz, recorded by `bench/deepwave_compare.py --record` from
Deepwave built by bench/deepwave.sh), and the call's rules."""
import pathlib
import sys

import numpy as np
import pytest
import torch

import starwave.torch as sw

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "bench"))
import deepwave_compare as dc  # noqa: E402  (the cases' runs, shared with the recording)


@pytest.fixture(scope="module")
def recorded():
    with np.load(HERE / "data" / "deepwave-0.0.27.npz") as f:
        return {k: (v.item() if v.ndim == 0 else v) for k, v in f.items()}


def case_of(recorded, prefix=""):
    return {k[len(prefix):]: v for k, v in recorded.items() if k.startswith(prefix)}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("accuracy", [4, 8])
def test_data_within_0_02_percent_of_deepwave(recorded, accuracy, dtype):
    """The direct wave and the point scatterer's data within 0.02 %, the scattered wave alone (their
    difference) within 0.1 % (2026-11-29: 1.5e-5 … 2.7e-5 in double, 4.1e-4 for the scattered wave in float)."""
    case = case_of(recorded)
    v, scattered = dc.models(case, dtype)
    direct = dc.run(sw.scalar, case, v, accuracy, dtype)
    scatter = dc.run(sw.scalar, case, scattered, accuracy, dtype)
    assert direct.dtype == dtype and direct.shape == recorded["direct_%d" % accuracy].shape
    assert dc.rel(direct, recorded["direct_%d" % accuracy]) < 2e-4
    assert dc.rel(scatter, recorded["scatter_%d" % accuracy]) < 2e-4
    only = recorded["scatter_%d" % accuracy].astype(np.float64) - recorded["direct_%d" % accuracy]
    assert dc.rel(scatter - direct, only) < 1e-3


def test_3d_direct_wave_within_0_02_percent_of_deepwave(recorded):
    case = case_of(recorded, "3d_")
    v = torch.full(tuple(case["shape"]), case["vp"], dtype=torch.float64)
    out = sw.scalar(v, case["h"], case["dt"], torch.from_numpy(case["amplitudes"]), torch.from_numpy(case["src"]),
                    torch.from_numpy(case["rec"]), accuracy=4, pml_freq=case["pml_freq"])
    assert len(out) == 2 + 2 * 3 + 1 and out[0].shape == (case["src"].shape[0], *[n + 40 for n in case["shape"]])
    assert dc.rel(out[-1], recorded["direct3d_4"]) < 2e-4


def test_first_gradient_within_0_1_percent_of_deepwave(recorded):
    g = dc.first_gradient(sw.scalar, case_of(recorded), 4)
    assert dc.rel(g, recorded["gradient_4"]) < 1e-3


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("accuracy", [4, 8])
def test_born_data_within_0_02_percent_of_deepwave(recorded, accuracy, dtype):
    """scalar_born's scattered data of a smooth perturbation, and Deepwave's tuple around it."""
    case = case_of(recorded)
    v, scatter = dc.born_models(case, dtype)
    d, n = dc.run_born(sw.scalar_born, case, v, scatter, accuracy, dtype)
    assert n == recorded["born_tuple_length"]
    assert d.dtype == dtype and d.shape == recorded["born_%d" % accuracy].shape
    assert dc.rel(d, recorded["born_%d" % accuracy]) < 2e-4


def test_born_gradient_within_0_1_percent_of_deepwave(recorded):
    g = dc.born_gradient(sw.scalar_born, case_of(recorded), 4)
    assert dc.rel(g, recorded["born_gradient_4"]) < 1e-3


def test_born_module_and_what_it_refuses():
    v, h, dt, amp, src, rec = small()
    scatter = torch.zeros_like(v)
    scatter[20:24, 15:25] = 50.0
    out = sw.scalar_born(v, scatter, h, dt, amp, src, rec, bg_receiver_locations=rec)
    assert len(out) == 2 * (2 + 2 * 2) + 2 and out[0] is None
    assert torch.equal(out[-2], sw.scalar(v, h, dt, amp, src, rec)[-1])  # the background's data
    assert torch.equal(sw.ScalarBorn(v, scatter, h)(dt, amp, src, rec)[-1], out[-1])
    assert float(out[-1].abs().max()) > 0
    x = v.clone().requires_grad_()  # v's gradient: vjp's derivative along the scatter (test_second_derivatives.py)
    (g,) = torch.autograd.grad(sw.scalar_born(x, scatter, h, dt, amp, src, rec)[-1].square().sum(), x)
    assert bool(torch.isfinite(g).all()) and float(g.abs().max()) > 0
    with pytest.raises(NotImplementedError, match="wavefield_sc_0"):
        sw.scalar_born(v, scatter, h, dt, amp, src, rec, wavefield_sc_0=torch.zeros(2, 70, 80))
    with pytest.raises(TypeError, match="scatter"):
        sw.scalar_born(v, scatter[:10], h, dt, amp, src, rec)
    bad = scatter.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="starwave.torch.scalar_born: scatter"):
        sw.scalar_born(v, bad, h, dt, amp, src, rec)
    # One model for every shot, [1, nz, nx] as scalar takes it: the scatter the same way.
    one = sw.scalar_born(v[None], scatter[None], h, dt, amp, src, rec)[-1]
    assert torch.equal(one, out[-1])
    with pytest.raises(TypeError, match="bg_receiver_locations must be a torch.Tensor"):
        sw.scalar_born(v, scatter, h, dt, amp, src, rec, bg_receiver_locations=rec.tolist())
    nan_amp = amp.clone()
    nan_amp[0, 0, 3] = float("nan")
    with pytest.raises(ValueError, match="source_amplitudes holds NaN or Inf"):
        sw.scalar_born(v, scatter, h, dt, nan_amp, src, rec)


def small(nsrc=1):
    v = torch.full((30, 40), 2000.0, dtype=torch.float64)
    v[18:] = 2500.0
    amplitudes = sw.wavelets.ricker(20.0, 120, 0.002, 0.05, dtype=torch.float64).repeat(2, nsrc, 1)
    src = torch.tensor([[[4, 10 + 5 * i] for i in range(nsrc)], [[4, 25 + 5 * i] for i in range(nsrc)]])
    rec = torch.zeros(2, 8, 2, dtype=torch.long)
    rec[..., 0] = 3
    rec[..., 1] = torch.arange(8) * 5 + 2
    return v, 5.0, 0.002, amplitudes, src, rec


def test_module_several_sources_and_ignored_locations():
    v, h, dt, amp, src, rec = small(nsrc=2)
    both = sw.scalar(v, h, dt, amp, src, rec)[-1]
    assert torch.equal(sw.Scalar(v, h)(dt, amp, src, rec)[-1], both)
    # A shot's sources add up: each alone, summed.
    alone = [sw.scalar(v, h, dt, amp[:, i:i + 1].contiguous(), src[:, i:i + 1].contiguous(), rec)[-1] for i in (0, 1)]
    assert torch.allclose(both, alone[0] + alone[1], rtol=1e-10, atol=1e-12 * float(both.abs().max()))
    # An ignored source adds nothing; an ignored receiver records zeros, the others unchanged.
    src2, rec2 = src.clone(), rec.clone()
    src2[:, 1] = sw.IGNORE_LOCATION
    rec2[0, 3] = sw.IGNORE_LOCATION
    out = sw.scalar(v, h, dt, amp, src2, rec2)[-1]
    assert torch.all(out[0, 3] == 0)
    keep = torch.ones(2, 8, dtype=torch.bool)
    keep[0, 3] = False
    assert torch.allclose(out[keep], alone[0][keep], rtol=1e-10, atol=1e-12 * float(both.abs().max()))


def test_gradient_flows_through_the_resampling():
    """dt above the stability limit: the data are resampled in torch, and the backward goes
    through it into the engine's adjoint: a Taylor test of ½‖d‖² along a perturbation of every cell."""
    v, h, dt, amp, src, rec = small()
    dt = 0.004
    amp = amp[..., ::2].contiguous()
    v = v.clone().requires_grad_()
    loss = lambda x: 0.5 * (sw.scalar(x, h, dt, amp, src, rec, max_vel=2600.0)[-1] ** 2).sum()  # noqa: E731
    f0 = loss(v)
    f0.backward()
    dv = torch.from_numpy(np.random.default_rng(3).uniform(-1, 1, size=tuple(v.shape)))
    errors = []
    for eps in (4.0, 2.0, 1.0):
        with torch.no_grad():
            errors.append(abs(float(loss(v + eps * dv) - f0 - eps * (v.grad * dv).sum())))
    assert errors[0] / errors[1] > 3.5 and errors[1] / errors[2] > 3.5, errors


def test_resampling_round_trip_and_deepwave_names():
    t = torch.arange(200, dtype=torch.float64)
    x = torch.sin(2 * np.pi * 5 * t / 200) + 0.5 * torch.cos(2 * np.pi * 12 * t / 200)
    from starwave._deepwave import downsample, upsample
    assert torch.allclose(downsample(upsample(x, 3), 3), x, atol=1e-12)
    w = sw.wavelets.ricker(25.0, 100, 0.004, 0.06)
    assert w.dtype == torch.get_default_dtype() and int(w.argmax()) == 15 and abs(float(w.max()) - 1) < 1e-6
    y = torch.ones(2, 10)
    assert sw.common.cosine_taper_end(y, 4)[0, -1] == 0 and y[0, 5] == 1
    assert sw.common.IGNORE_LOCATION == sw.IGNORE_LOCATION == -(1 << 31)


def test_what_it_refuses():
    v, h, dt, amp, src, rec = small()
    refused = [
        (NotImplementedError, "wavefield_0 has shape", dict(wavefield_0=torch.zeros(2, 60, 80))),
        (ValueError, "survey_pad and origin cannot both be given", dict(survey_pad=5, origin=[0, 0])),
        (ValueError, "survey_pad must be a whole number", dict(survey_pad=[1, 2])),
        (NotImplementedError, "forward_callback", dict(forward_callback=print)),
        (ValueError, "pml_width must be a whole number of cells", dict(pml_width=[20, 20, -1, 20])),
        (ValueError, r"pml_width must be a whole number of cells .* \(got True\)", dict(pml_width=True)),
        (ValueError, r"pml_width must be a whole number of cells .* \(got tensor\(True\)\)",
         dict(pml_width=torch.tensor(True))),
        (ValueError, "pml_width must be a whole number of cells", dict(pml_width=[20, np.True_, 20, 20])),
        (TypeError, "unexpected keyword argument 'pml_frq'", dict(pml_frq=25.0)),
        (ValueError, "accuracy must be 2, 4, 6 or 8", dict(accuracy=5)),
        (ValueError, "storage_mode", dict(storage_mode="tape")),
    ]
    for error, words, options in refused:
        with pytest.raises(error, match=words):
            sw.scalar(v, h, dt, amp, src, rec, **options)
    outside = rec.clone()
    outside[1, 2, 1] = 40
    with pytest.raises(ValueError, match=r"receiver_locations: cell \[3, 40\] is outside the model of shape \[30, 40\]"):
        sw.scalar(v, h, dt, amp, src, outside)
    with pytest.raises(TypeError, match="torch.long"):
        sw.scalar(v, h, dt, amp, src.int(), rec)
    with pytest.raises(ValueError, match="v's dtype"):
        sw.scalar(v, h, dt, amp.float(), src, rec)
    with pytest.raises(NotImplementedError, match="a model per shot"):
        sw.scalar_born(v.expand(2, 30, 40), v.expand(2, 30, 40), h, dt, amp, src, rec)
    with pytest.raises(ValueError, match="grid_spacing"):
        sw.scalar(v, [5.0, -1.0], dt, amp, src, rec)
    with pytest.raises(ValueError, match=r"v holds 0 m/s at index \[2, 5\]: velocities must be positive"):
        bad = v.clone()
        bad[2, 5] = 0
        sw.scalar(bad, h, dt, amp, src, rec)
    with pytest.raises(ValueError, match=r"v holds NaN or Inf \(at index \[3, 4\]\)"):
        bad = v.clone()
        bad[3, 4] = float("nan")
        sw.scalar(bad, h, dt, amp, src, rec)
    with pytest.raises(ValueError, match="a 3-D model needs \\[shot, n, 3\\] locations"):
        sw.scalar(v.expand(5, 30, 40).contiguous(), h, dt, amp, src, rec)
    with pytest.raises(TypeError, match="callback_frequency must be a whole number"):
        sw.scalar(v, h, dt, amp, src, rec, callback_frequency=np.array([1, 2]))
    with pytest.raises(TypeError, match="storage_compression must be True or False"):
        sw.scalar(v, h, dt, amp, src, rec, storage_compression="yes")
    assert sw.scalar(v, h, dt, amp, src)[-1].numel() == 0  # no receivers: empty data, as Deepwave


def test_edges_of_the_call():
    v, h, dt, amp, src, rec = small()
    # A record too short for a wave to cross a cell, and none at all: as Deepwave, no refusal.
    fine = 0.0005  # one inner step a sample
    full = sw.scalar(v, h, fine, amp, src, rec)[-1]
    short = sw.scalar(v, h, fine, amp[..., :4].contiguous(), src, rec)[-1]
    assert short.shape == (2, 8, 4) and torch.allclose(short, full[..., :4], rtol=0, atol=1e-12 * float(full.abs().max()))
    assert sw.scalar(v, h, dt, amp[..., :0].contiguous(), src, rec)[-1].shape == (2, 8, 0)
    # Deepwave's other spellings of its arguments.
    same = sw.scalar(v, torch.tensor([5.0, 5.0]), dt, amp, src, rec, accuracy=4.0, pml_width=np.int64(20))[-1]
    assert torch.equal(same, sw.scalar(v, h, dt, amp, src, rec)[-1])
    assert torch.isfinite(sw.scalar(v, h, dt, amp, src, rec, pml_freq=0)[-1]).all()  # no α in the layers
    # Every source ignored: zero data, and a zero gradient through backward().
    x = v.clone().requires_grad_()
    nothing = src.clone().fill_(sw.IGNORE_LOCATION)
    out = sw.scalar(x, h, dt, amp, nothing, rec)[-1]
    out.sum().backward()
    assert torch.all(out == 0) and torch.all(x.grad == 0)
    refused = [
        ("pml_freq must be a frequency", dict(pml_freq=-1.0)),
        ("freq_taper_frac must be a number in", dict(freq_taper_frac=1.5)),
        ("time_pad_frac must be a number in", dict(time_pad_frac=-0.5)),
        ("max_vel = 1000 m/s, below v's largest value 2500", dict(max_vel=1000.0)),
    ]
    for words, options in refused:
        with pytest.raises(ValueError, match=words):
            sw.scalar(v, h, dt, amp, src, rec, **options)
    with pytest.raises(ValueError, match="dt = 20 s needs"):
        sw.scalar(v, h, 20.0, amp, src, rec)
    with pytest.raises(ValueError, match="go together"):
        sw.scalar(v, h, dt, amp, None, rec)
    half = src.clone()
    half[0, 0, 0] = sw.IGNORE_LOCATION
    with pytest.raises(ValueError, match="ignored in every dimension"):
        sw.scalar(v, h, dt, amp, half, rec)
