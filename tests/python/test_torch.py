"""starwave.torch: autograd through the engine (pytest; PYTHONPATH=build/python)."""
import numpy as np
import pytest
import torch

import starwave
import starwave.torch as swt


def tiny(dtype):
    v = torch.full((14, 16), 2000.0, dtype=dtype)
    v[8:] = 2600.0
    t = np.arange(90) * 0.002
    wavelet = (1 - 2 * (np.pi * 20 * (t - 0.05)) ** 2) * np.exp(-(np.pi * 20 * (t - 0.05)) ** 2)
    sources = np.array([[25.0, 43.0]])
    receivers = np.array([[20.0, 100.0], [95.0, 120.0]])
    options = dict(order=4, pml_width=6, internal_dt=0.001, pml_velocity=2600.0)
    return v, 10.0, 0.002, wavelet, sources, receivers, options


def test_gradcheck_in_double():
    """torch.autograd.gradcheck: the backward (starwave.vjp) against finite differences of the
    forward, every cell of the model (edges included), the data scaled to order 1."""
    v, h, dt, w, s, r, options = tiny(torch.float64)
    scale = 1.0 / np.abs(swt.model(v, h, dt, w, s, r, **options).numpy()).max()

    def f(x):
        return swt.model(x, h, dt, w, s, r, **options) * scale

    assert torch.autograd.gradcheck(f, (v.clone().requires_grad_(),), eps=1e-2, atol=1e-6, rtol=1e-4)


def test_backward_is_the_gradient_of_the_misfit():
    """½ Σ (d − d_obs)² through autograd: v.grad is starwave.gradient's ∂Φ/∂v (float32, the same bits)."""
    v, h, dt, w, s, r, options = tiny(torch.float32)
    observed = swt.model(v, h, dt, w, s, r, **options).detach()
    v0 = (v * 0.97).requires_grad_()
    d = swt.model(v0, h, dt, w, s, r, **options)
    assert d.dtype == torch.float32 and d.shape == (1, 2, 90)
    loss = 0.5 * ((d - observed) ** 2).sum()
    loss.backward()
    misfit, g = starwave.gradient(v0.detach().numpy(), h, dt, w, s, r, observed.numpy(), **options)
    assert abs(loss.item() - misfit) <= 1e-6 * misfit
    assert np.array_equal(v0.grad.numpy(), g.astype(np.float32))


def test_what_it_refuses():
    v, h, dt, w, s, r, options = tiny(torch.float32)
    with pytest.raises(NotImplementedError, match="option accuracy"):
        swt.model(v, h, dt, w, s, r, accuracy=4)
    with pytest.raises(NotImplementedError, match="positions"):
        swt.model(v, h, dt, w, torch.tensor(s, requires_grad=True), r)
    with pytest.raises(ValueError, match="vp: dtype float16"):
        swt.model(v.half(), h, dt, w, s, r)
    # A dtype numpy has no type for: the same refusal, not torch's conversion error.
    with pytest.raises(ValueError, match="starwave.torch.model: v: dtype bfloat16 is not supported"):
        swt.model(v.bfloat16(), h, dt, w, s, r)
    with pytest.raises(ValueError, match="starwave.torch.born: v: dtype bfloat16 is not supported"):
        swt.born(v.bfloat16(), torch.zeros_like(v), h, dt, w, s, r)
    with pytest.raises(ValueError, match=r"pml_width: a whole number of cells, or one a side \(got array\(True\)\)"):
        swt.model(v, h, dt, w, s, r, pml_width=torch.tensor(True))
    with pytest.raises(TypeError, match="torch.Tensor"):
        swt.model(v.numpy(), h, dt, w, s, r)


def test_direct_wave_is_the_analytic_greens_function():
    """A homogeneous 2-D space, order 8 at 6 cells per wavelength (2.5 × the 10 Hz peak), float64:
    the trace 400 m away is (s ∗ G)(t) for (1/v²)u_tt − ∇²u = s(t)δ(x), G = H(t − r/v) / (2π
    √(t² − r²/v²)), evaluated as (1/2π) ∫₀^acosh(vt/r) s(t − (r/v) cosh θ) dθ (Simpson)."""
    v0, f, dt, nt = 2000.0, 10.0, 1e-3, 601
    h = v0 / (2.5 * f * 6)
    t = np.arange(nt) * dt

    def ricker(x):
        a = (np.pi * f * (x - 1.5 / f)) ** 2
        return (1 - 2 * a) * np.exp(-a)

    v = torch.full((121, 121), v0, dtype=torch.float64)
    d = swt.model(v, h, dt, ricker(t), np.array([[60 * h, 60 * h]]), np.array([[60 * h, 90 * h]]), order=8)
    tau = 30 * h / v0
    theta_max = np.arccosh(np.maximum(t / tau, 1.0))
    theta = np.linspace(0, 1, 4001)[None, :] * theta_max[:, None]
    weights = np.ones(4001)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    expected = (ricker(t[:, None] - tau * np.cosh(theta)) * weights).sum(1) * theta_max / (3 * 4000) / (2 * np.pi)
    trace = d[0, 0].numpy()
    assert np.linalg.norm(trace - expected) / np.linalg.norm(expected) < 0.01


def test_born_is_the_derivative_and_its_backward_the_transpose():
    """starwave.born is the derivative of model along dv (a central difference of model's data
    agrees to 1e-4 in double), and starwave.torch.born's backward gives dv.grad = Jᵀ·grad:
    ⟨J dv, r⟩ = ⟨dv, dv.grad⟩ to 1e-12 in double; v.grad is refused, not left wrong."""
    v, h, dt, w, s, r, options = tiny(torch.float64)
    rng = np.random.default_rng(4)
    dv = torch.from_numpy(rng.uniform(-20, 20, v.shape))
    j = starwave.born(v.numpy(), dv.numpy(), h, dt, w, s, r, **options)
    assert j.dtype == np.float64 and j.shape == (1, 2, 90) and np.abs(j).max() > 0
    eps = 0.5
    fd = (starwave.model((v + eps * dv).numpy(), h, dt, w, s, r, **options) -
          starwave.model((v - eps * dv).numpy(), h, dt, w, s, r, **options)) / (2 * eps)
    assert np.linalg.norm(fd - j) <= 1e-4 * np.linalg.norm(j)

    x = dv.clone().requires_grad_()
    data = swt.born(v, x, h, dt, w, s, r, **options)
    assert np.array_equal(data.detach().numpy(), j)
    # float32 values: vjp's cotangent enters in float32 (module help), so the test holds to double's precision
    cot = torch.from_numpy(rng.uniform(-1, 1, data.shape).astype(np.float32).astype(np.float64))
    (data * cot).sum().backward()
    lhs, rhs = float((torch.from_numpy(j) * cot).sum()), float((dv * x.grad).sum())
    assert abs(lhs - rhs) <= 1e-12 * abs(lhs)

    # layers=False (Deepwave's scalar_born: no perturbation in the absorbing layers) with its own
    # transpose, vjp(…, layers=False): the same dot test; another operator where dv reaches the edges.
    j0 = starwave.born(v.numpy(), dv.numpy(), h, dt, w, s, r, layers=False, **options)
    g0 = starwave.vjp(v.numpy(), h, dt, w, s, r, cot.numpy(), layers=False, **options)
    lhs0, rhs0 = float((j0 * cot.numpy()).sum()), float((dv.numpy() * g0).sum())
    assert abs(lhs0 - rhs0) <= 1e-12 * abs(lhs0)
    assert np.linalg.norm(j0 - j) > 1e-3 * np.linalg.norm(j)
    with pytest.raises(ValueError, match="dv"):
        starwave.born(v.numpy(), dv.numpy()[:3], h, dt, w, s, r, **options)
    bad = dv.numpy().copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match="dv"):
        starwave.born(v.numpy(), bad, h, dt, w, s, r, **options)
    # dv of vp's size in another shape, complex, or far beyond the velocities: refused naming dv
    # (a reshaped dv would be read in the wrong cells; a huge one overflows the scattered field).
    for other in (dv.numpy().T.copy(), dv.numpy().reshape(7, 32), dv.numpy() * 1j):
        with pytest.raises(ValueError, match="dv"):
            starwave.born(v.numpy(), other, h, dt, w, s, r, **options)
    # Any scale in double (J is linear: a search direction's too); in float32 what float32 holds.
    huge = np.zeros(v.shape)
    huge[3, 3] = 1e6
    j6 = starwave.born(v.numpy(), huge, h, dt, w, s, r, **options)
    assert np.allclose(starwave.born(v.numpy(), huge * 2.0 ** 800, h, dt, w, s, r, **options), j6 * 2.0 ** 800, rtol=1e-12)
    with pytest.raises(ValueError, match=r"dv: holds 1e\+300, beyond float32"):
        starwave.born(v.numpy().astype(np.float32), huge * 1e294, h, dt, w, s, r, **options)
    # starwave.torch.born refuses a store_compression it does not know at the call, not at backward.
    with pytest.raises(ValueError, match="starwave.torch.born: store_compression"):
        swt.born(v, x, h, dt, w, s, r, store_compression="xx", **options)
    with pytest.raises(ValueError, match="starwave.torch.model: store_compression"):
        swt.model(v, h, dt, w, s, r, store_compression="fp17", **options)
