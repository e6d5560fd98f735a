"""Initial and final wavefields (pytest): starwave.model's states and Deepwave's wavefield_0 … and
final wavefields in starwave.torch.scalar; Deepwave's other options accepted; a model per shot; what
is not differentiated is refused, never given as zeros."""
import warnings

import numpy as np
import pytest
import torch

import starwave
import starwave.torch as sw


def ricker(nt, dt, f=15.0, delay=0.06):
    t = np.arange(nt) * dt - delay
    a = (np.pi * f * t) ** 2
    return (1 - 2 * a) * np.exp(-a)


@pytest.mark.parametrize("dim, free_surface, dtype", [(2, False, np.float64), (2, True, np.float32),
                                                      (3, False, np.float32)])
def test_a_propagation_in_two_calls_has_the_bits_of_one(dim, free_surface, dtype):
    """The state one call hands on, given to the next, continues the propagation bit for bit: the
    traces of both parts and the last state are those of one call over the whole record."""
    shape = (30, 40) if dim == 2 else (16, 18, 20)
    v = (2000 + 300 * np.random.default_rng(1).random(shape)).astype(dtype)
    dt, nt, cut = 0.0005, 400, 150
    w = ricker(nt, dt)
    if dim == 2:
        src = np.array([[40.0, 100.0], [60.0, 250.0]])
        rec = np.stack([np.full(10, 20.0), np.arange(10) * 30.0 + 10], 1)
    else:
        src = np.array([[40.0, 60.0, 100.0]])
        rec = np.stack([np.full(5, 20.0), np.full(5, 50.0), np.arange(5) * 30.0 + 10], 1)
    kw = dict(free_surface=free_surface, pml_width=8, internal_dt=dt, pml_frequency=15.0)
    whole, end = starwave.model(v, 10.0, dt, w, src, rec, final_state=True, **kw)
    first, middle = starwave.model(v, 10.0, dt, w[:cut + 1], src, rec, final_state=True, **kw)
    second, last = starwave.model(v, 10.0, dt, w[cut:], src, rec, initial_state=middle, final_state=True, **kw)
    top = 0 if free_surface else 8
    assert end.dtype == dtype and end.shape == (len(src), 2 + 2 * dim, shape[0] + top + 8, *[n + 16 for n in shape[1:]])
    assert np.abs(middle).max() > 0
    assert np.array_equal(whole[..., :cut + 1], first) and np.array_equal(whole[..., cut:], second)
    assert np.array_equal(end, last)
    plain = starwave.model(v, 10.0, dt, w, src, rec, **kw)  # the same traces without states
    assert np.array_equal(plain, whole)


def test_initial_states_are_checked():
    v = np.full((20, 30), 2000.0)
    w = ricker(200, 0.0005)
    src, rec = np.array([[50.0, 100.0]]), np.array([[20.0, 50.0]])
    good = np.zeros((1, 6, 20 + 16, 30 + 16))
    starwave.model(v, 10.0, 0.0005, w, src, rec, pml_width=8, initial_state=good)
    with pytest.raises(ValueError, match=r"initial_state: an array of shape \(1, 6, 36, 46\), not"):
        starwave.model(v, 10.0, 0.0005, w, src, rec, pml_width=8, initial_state=good[:, :4])
    bad = good.copy()
    bad[0, 2, 3, 4] = np.nan
    with pytest.raises(ValueError, match="initial_state: NaN or Inf"):
        starwave.model(v, 10.0, 0.0005, w, src, rec, pml_width=8, initial_state=bad)


def deepwave_case(dtype=torch.float64, nt=240):
    torch.manual_seed(0)
    v = 1500 + 200 * torch.rand(40, 50, dtype=dtype)
    t = torch.arange(nt, dtype=dtype) * 0.001 - 0.06
    a = (np.pi * 20 * t) ** 2
    amp = ((1 - 2 * a) * torch.exp(-a))[None, None].repeat(2, 1, 1)
    src = torch.tensor([[[10, 15]], [[20, 30]]])
    rec = torch.tensor([[[5, k] for k in range(5, 45, 5)]] * 2)
    return v, amp, src, rec


def test_deepwave_call_hands_on_its_wavefields_in_deepwave_positions():
    v, amp, src, rec = deepwave_case()
    kw = dict(accuracy=8, pml_freq=20, max_vel=1800, pml_width=12)
    whole = sw.scalar(v, 5.0, 0.001, source_amplitudes=amp, source_locations=src, receiver_locations=rec, **kw)
    assert len(whole) == 7 and all(x.shape == (2, 64, 74) for x in whole[:6])
    psiy, psix = whole[2], whole[3]
    assert float(psiy[:, 12:52].abs().max()) == 0 and float(psiy[:, :12].abs().max()) > 0  # ψ_y: top and bottom
    assert float(psix[:, :, 12:62].abs().max()) == 0 and float(psix[:, :, 62:].abs().max()) > 0
    half = 120
    first = sw.scalar(v, 5.0, 0.001, source_amplitudes=amp[..., :half], source_locations=src,
                      receiver_locations=rec, **kw)
    names = ("wavefield_0", "wavefield_m1", "psiy_m1", "psix_m1", "zetay_m1", "zetax_m1")
    second = sw.scalar(v, 5.0, 0.001, source_amplitudes=amp[..., half:], source_locations=src,
                       receiver_locations=rec, **dict(zip(names, first[:6])), **kw)
    assert torch.equal(first[-1], whole[-1][..., :half]) and torch.equal(second[-1], whole[-1][..., half:])
    assert all(torch.equal(a, b) for a, b in zip(second[:6], whole[:6]))
    # Without sources, the wavefields alone: a shot of its initial state only.
    alone = sw.scalar(v, 5.0, 0.001, receiver_locations=rec, nt=amp.shape[-1] - half, **dict(zip(names, first[:6])),
                      **kw)
    silent = sw.scalar(v, 5.0, 0.001, source_amplitudes=0 * amp[..., half:], source_locations=src,
                       receiver_locations=rec, **dict(zip(names, first[:6])), **kw)
    assert torch.equal(alone[-1], silent[-1]) and float(alone[-1].abs().max()) > 0
    with pytest.raises(NotImplementedError, match=r"wavefield_0 has shape \[2, 60, 74\]; expected \[2, 64, 74\]"):
        sw.scalar(v, 5.0, 0.001, amp, src, rec, wavefield_0=torch.zeros(2, 60, 74, dtype=v.dtype), **kw)


def test_deepwave_options_that_change_nothing_are_accepted():
    v, amp, src, rec = deepwave_case(nt=150)
    v.requires_grad_()
    plain = sw.scalar(v, 5.0, 0.001, amp, src, rec)[-1]
    (g,) = torch.autograd.grad(plain.square().sum(), v)
    with pytest.warns(UserWarning, match="python_backend='jit' is accepted"):
        jit = sw.scalar(v, 5.0, 0.001, amp, src, rec, python_backend="jit")[-1]
    assert torch.equal(jit, plain)
    with pytest.warns(UserWarning, match="exact gradient"):
        out = sw.scalar(v, 5.0, 0.001, amp, src, rec, model_gradient_sampling_interval=3)[-1]
    (g3,) = torch.autograd.grad(out.square().sum(), v)
    assert torch.equal(g3, g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sw.scalar(v, 5.0, 0.001, amp, src, rec, storage_compression=True)[-1]
    (gc,) = torch.autograd.grad(out.square().sum(), v)
    assert torch.equal(out, plain) and not torch.equal(gc, g) and float((gc - g).norm() / g.norm()) < 1e-2
    for bad, error in ((dict(python_backend="fast"), ValueError), (dict(model_gradient_sampling_interval=0), ValueError),
                       (dict(storage_compression=1), TypeError)):
        with pytest.raises(error):
            sw.scalar(v, 5.0, 0.001, amp, src, rec, **bad)


def test_a_model_per_shot_runs_each_shot_on_its_own():
    v, amp, src, rec = deepwave_case(nt=150)
    both = torch.stack([v, v * 1.1])
    out = sw.scalar(both, 5.0, 0.001, amp, src, rec, max_vel=2000)[-1]
    for i, model in enumerate((v, v * 1.1)):
        alone = sw.scalar(model, 5.0, 0.001, amp[i:i + 1], src[i:i + 1], rec[i:i + 1], max_vel=2000)[-1]
        assert torch.equal(out[i:i + 1], alone)


def test_what_is_not_differentiated_is_refused():
    """A third derivative (born's gradient with respect to v, differentiated again) raises, never gives
    zeros."""
    v, amp, src, rec = deepwave_case(nt=150)
    v.requires_grad_()
    out = sw.born(v, torch.rand_like(v), 5.0, 0.001, amp[0, 0].detach().numpy(), [[20.0, 20.0]], [[5.0, 30.0]],
                  pml_width=4)
    with pytest.raises(NotImplementedError, match="third derivative"):
        torch.autograd.grad(out.square().sum(), v, create_graph=True)


def test_a_float64_run_takes_its_wavelet_and_cotangent_in_double():
    """⟨J dv, c⟩ = ⟨dv, vjp(c)⟩ to 1e-12 with a float64 cotangent and wavelet that float32 cannot hold
    (in float32 they would agree to ~1e-8 only); the wavelet's last bits reach the data."""
    rng = np.random.default_rng(0)
    v = 2000 + 200 * rng.random((30, 40))
    w = ricker(300, 0.001) + 1e-9 * rng.standard_normal(300)
    src, rec = np.array([[50.0, 100.0]]), np.stack([np.full(10, 20.0), np.arange(10) * 30.0 + 10], 1)
    kw = dict(pml_width=8, internal_dt=0.001, pml_frequency=15.0)
    dv = rng.standard_normal(v.shape)
    jd = starwave.born(v, dv, 10.0, 0.001, w, src, rec, **kw)
    c = rng.standard_normal(jd.shape)
    g = starwave.vjp(v, 10.0, 0.001, w, src, rec, c, **kw)
    lhs = float((jd * c).sum())
    assert abs(lhs - float((dv * g).sum())) < 1e-12 * abs(lhs)
    rounded = starwave.vjp(v, 10.0, 0.001, w, src, rec, c.astype(np.float32), **kw)
    assert abs(lhs - float((dv * rounded).sum())) > 1e-10 * abs(lhs)
    d = starwave.model(v, 10.0, 0.001, w, src, rec, **kw)
    assert not np.array_equal(d, starwave.model(v, 10.0, 0.001, w.astype(np.float32), src, rec, **kw))


def gradcheck_case(dim):
    """A tiny double-precision Deepwave call: v, two shots' amplitudes, their cells and receivers, the layers'
    width, and the names and random values of every initial wavefield."""
    torch.manual_seed(1)
    shape = (4, 3) if dim == 2 else (3, 3, 4)
    v = (1500 + 100 * torch.rand(shape, dtype=torch.float64)).requires_grad_()
    nt = 40
    t = torch.arange(nt, dtype=torch.float64) * 0.001 - 0.02
    amp = ((1 - 2 * (np.pi * 25 * t) ** 2) * torch.exp(-(np.pi * 25 * t) ** 2))[None, None].repeat(2, 1, 1)
    amp = (amp * (1 + 0.1 * torch.rand(2, 1, 1, dtype=torch.float64))).requires_grad_()
    src = torch.tensor([[[1] * (dim - 1) + [1]], [[2] * (dim - 1) + [2]]])
    rec = torch.tensor([[[0] * dim, [shape[0] - 1] + [1] * (dim - 2) + [2]]] * 2)
    width = 2
    grid = [n + 2 * width for n in shape]
    names = ("wavefield_0", "wavefield_m1") + tuple("psi%s_m1" % a for a in "zyx"[3 - dim:]) + \
        tuple("zeta%s_m1" % a for a in "zyx"[3 - dim:])
    states = [(1e-3 * torch.rand(2, *grid, dtype=torch.float64)).requires_grad_() for _ in names]

    def call(v, amp, *given):
        return sw.scalar(v, 5.0, 0.001, amp, src, rec, accuracy=4, pml_width=width, pml_freq=25, max_vel=2000,
                         **dict(zip(names, given)))

    return call, v, amp, states


@pytest.mark.parametrize("dim", [2, 3])
def test_gradcheck_through_wavefields_and_amplitudes(dim):
    """torch's gradcheck in double of Deepwave's call with v, the source amplitudes and every initial
    wavefield requiring a gradient, and every output (the final wavefields and the data) in the loss."""
    call, v, amp, states = gradcheck_case(dim)
    assert torch.autograd.gradcheck(call, (v, amp, *states), fast_mode=True, atol=1e-8, rtol=1e-5)


@pytest.mark.parametrize("dim", [2, 3])
def test_gradgradcheck_through_wavefields_and_amplitudes(dim):
    """torch's gradgradcheck in double (second derivatives: starwave.vjp_derivative) of the same call with v,
    the amplitudes and the two initial wavefields requiring a gradient, the data and u's last state in the
    loss."""
    call, v, amp, states = gradcheck_case(dim)

    def outputs(v, amp, w0, wm1):
        out = call(v, amp, w0, wm1)
        return out[0], out[-1]

    assert torch.autograd.gradgradcheck(outputs, (v, amp, *states[:2]), fast_mode=True, atol=1e-8, rtol=1e-5)


def test_survey_pad_and_origin_propagate_in_the_surveys_region():
    """survey_pad: the locations' box widened on each side (None: to the edge), the model cut to it
    (the same bits as a call on the cut model; v's gradient zero outside); origin: where given
    wavefields start."""
    v, amp, src, rec = deepwave_case(nt=150)
    v.requires_grad_()
    kw = dict(accuracy=4, pml_freq=20, max_vel=2000, pml_width=10)
    out = sw.scalar(v, 5.0, 0.001, amp, src, rec, survey_pad=3, **kw)
    lo = torch.tensor([2, 2])  # the locations span rows 5 … 20, columns 5 … 40 of the 40 × 50 model
    cut = sw.scalar(v[2:24, 2:44], 5.0, 0.001, amp, src - lo, rec - lo, **kw)
    assert out[0].shape == (2, 42, 62) and all(torch.equal(a, b) for a, b in zip(out, cut))
    (g,) = torch.autograd.grad(out[-1].square().sum(), v)
    assert float(g[24:].abs().max()) == 0 and float(g[:, 44:].abs().max()) == 0 and float(g[2:24, 2:44].abs().max()) > 0
    wide = sw.scalar(v, 5.0, 0.001, amp, src, rec, survey_pad=[None, 1, 0, None], **kw)
    assert wide[0].shape == (2, 22 + 20, 45 + 20)  # rows 0 … 21, columns 5 … 49
    names = ("wavefield_0", "wavefield_m1", "psiy_m1", "psix_m1", "zetay_m1", "zetax_m1")
    placed = sw.scalar(v.detach(), 5.0, 0.001, amp, src, rec, origin=[2, 2], **dict(zip(names, out[:6])), **kw)
    again = sw.scalar(v.detach()[2:24, 2:44], 5.0, 0.001, amp, src - lo, rec - lo, **dict(zip(names, out[:6])), **kw)
    assert torch.equal(placed[-1], again[-1])
    with pytest.raises(ValueError, match="is not inside the model"):
        sw.scalar(v.detach(), 5.0, 0.001, amp, src, rec, origin=[30, 2], **dict(zip(names, out[:6])), **kw)


def test_the_wavelets_gradient_has_the_wavelets_dtype():
    v = torch.full((20, 30), 2000.0, dtype=torch.float32, requires_grad=True)
    w = torch.tensor(ricker(200, 0.001), requires_grad=True)  # float64 beside a float32 model
    d = sw.model(v, 10.0, 0.001, w, [[50.0, 100.0]], [[20.0, 150.0]], internal_dt=0.001)
    d.square().sum().backward()
    assert v.grad.dtype == torch.float32 and w.grad.dtype == torch.float64 and float(w.grad.abs().max()) > 0


@pytest.mark.parametrize("dim", [2, 3])
def test_layers_of_a_width_a_side(dim):
    """pml_width one a side (z low, z high, [y low, y high,] x low, x high): the states' grid is the model
    widened by each; equal widths give the one width's bits; thick layers on every side absorb (the
    data within 0.1 % of much wider layers'), a side without one reflects; Deepwave's call takes them."""
    shape = (40, 50) if dim == 2 else (16, 18, 20)
    v = np.full(shape, 2000.0)
    w = ricker(300, 0.001)
    src = np.array([[200.0, 250.0]]) if dim == 2 else np.array([[80.0, 90.0, 100.0]])
    rec = np.stack([np.full(10, 60.0), np.arange(10) * 40.0 + 10], 1) if dim == 2 else \
        np.stack([np.full(5, 40.0), np.full(5, 60.0), np.arange(5) * 30.0 + 20], 1)
    sides = [20, 30, 25, 35] if dim == 2 else [12, 16, 14, 18, 15, 13]
    data, end = starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=sides, final_state=True)
    assert end.shape[2:] == tuple(n + sides[2 * d] + sides[2 * d + 1] for d, n in enumerate(shape))
    assert np.array_equal(starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=[20] * (2 * dim)),
                          starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=20))
    wide = starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=60 if dim == 2 else 40)
    assert np.linalg.norm(data - wide) < 1e-3 * np.linalg.norm(wide)
    with pytest.raises(ValueError, match="a free surface has no layer on top"):
        starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=sides, free_surface=True)
    open_top = starwave.model(v, 10.0, 0.001, w, src, rec, pml_width=[0] + sides[1:])
    assert np.linalg.norm(open_top - wide) > 0.1 * np.linalg.norm(wide)
    if dim == 2:
        amp = torch.tensor(w)[None, None]
        out = sw.scalar(torch.tensor(v), 10.0, 0.001, amp, torch.tensor([[[20, 25]]]), torch.tensor([[[6, 10]]]),
                        pml_width=[3, 0, 5, 2])
        assert out[0].shape == (1, 43, 57) and out[-1].shape == (1, 1, 300)

