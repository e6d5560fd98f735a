"""Second derivatives (pytest): starwave.vjp_derivative is the exact derivative of starwave.vjp with
respect to each of its inputs (central differences in double, 2-D and 3-D, off-grid points, the
absorbing layers and the model's edges in every direction); torch's double backward through
starwave.torch uses it (gradgradcheck in double: test_wavefields.py)."""
import numpy as np
import pytest
import torch

import starwave
import starwave.torch as sw


def ricker(nt, dt, f=15.0, delay=0.06):
    t = np.arange(nt) * dt - delay
    a = (np.pi * f * t) ** 2
    return (1 - 2 * a) * np.exp(-a)


def case(dim, rng):
    shape = (12, 14) if dim == 2 else (8, 9, 10)
    v = 2000 + 300 * rng.random(shape)
    nt = 60
    w = np.stack([ricker(nt, 0.001), 0.7 * ricker(nt, 0.001, delay=0.05)])
    if dim == 2:
        src = np.array([[40.0, 50.0], [60.0, 85.0]])  # off the nodes
        rec = np.stack([np.full(4, 20.0), np.arange(4) * 30.0 + 10], 1)
    else:
        src = np.array([[40.0, 30.0, 50.0], [30.0, 40.0, 65.0]])
        rec = np.stack([np.full(3, 20.0), np.full(3, 50.0), np.arange(3) * 30.0 + 15], 1)
    kw = dict(pml_width=4, internal_dt=0.0005, pml_frequency=15.0, pml_velocity=2400.0)
    return v, w, src, rec, kw


@pytest.mark.parametrize("dim", [2, 3])
def test_vjp_derivative_is_the_derivative_of_vjp(dim):
    """Φ₂ = ⟨direction, vjp(v, s₀, w; c, g)⟩: its central difference along a random change of each input
    agrees with ⟨vjp_derivative's cotangent, change⟩ — the velocities (O(h²) error, h = 0.01 m/s), and
    the initial states, wavelets, trace and end-state cotangents (Φ₂ is linear or quadratic in them)."""
    rng = np.random.default_rng(3)
    v, w, src, rec, kw = case(dim, rng)
    d, end = starwave.model(v, 10.0, 0.001, w, src, rec, final_state=True, **kw)
    s0 = 1e-2 * rng.standard_normal(end.shape)
    c, g = rng.standard_normal(d.shape), 0.1 * rng.standard_normal(end.shape)
    dv, ds, dw = rng.standard_normal(v.shape), rng.standard_normal(end.shape), rng.standard_normal(w.shape)

    def phi(v, s0, w, c, g):
        a, b, e = starwave.vjp(v, 10.0, 0.001, w, src, rec, c, initial_state=s0, final_cotangent=g, states=True, **kw)
        return np.sum(dv * a) + np.sum(ds * b) + np.sum(dw * e)

    hv, hs, hw, hc, hg = starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, initial_state=s0,
                                                 final_cotangent=g, dv=dv, d_initial_state=ds, d_wavelet=dw, **kw)
    assert hv.shape == v.shape and hs.shape == end.shape and hw.shape == w.shape
    assert hc.shape == d.shape and hg.shape == end.shape
    point = [v, s0, w, c, g]
    changes = [rng.standard_normal(v.shape), 1e-2 * rng.standard_normal(end.shape), rng.standard_normal(w.shape),
               rng.standard_normal(d.shape), 0.1 * rng.standard_normal(end.shape)]
    for i, (h, cotangent) in enumerate(zip([1e-2, 1, 1, 1, 1], [hv, hs, hw, hc, hg])):
        up, down = list(point), list(point)
        up[i], down[i] = point[i] + h * changes[i], point[i] - h * changes[i]
        numeric = (phi(*up) - phi(*down)) / (2 * h)
        analytic = float(np.sum(cotangent * changes[i]))
        assert abs(numeric) > 0
        assert abs(analytic - numeric) < 1e-6 * abs(numeric), (i, analytic, numeric)


def test_the_data_tangent_is_born_plus_the_direction_s_own_propagation():
    """∂Φ₂/∂c and ∂Φ₂/∂g are the tangents of the traces and the end state: J·dv's (starwave.born) plus
    those of the direction's wavelet and initial state propagated alone (the data are linear in both)."""
    rng = np.random.default_rng(4)
    v, w, src, rec, kw = case(2, rng)
    d, end = starwave.model(v, 10.0, 0.001, w, src, rec, final_state=True, **kw)
    dv, ds, dw = rng.standard_normal(v.shape), 1e-2 * rng.standard_normal(end.shape), rng.standard_normal(w.shape)
    c = rng.standard_normal(d.shape)
    _, _, _, hc, hg = starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, dv=dv, d_initial_state=ds,
                                              d_wavelet=dw, **kw)
    born = starwave.born(v, dv, 10.0, 0.001, w, src, rec, **kw)
    own, own_end = starwave.model(v, 10.0, 0.001, dw, src, rec, initial_state=ds, final_state=True, **kw)
    assert np.allclose(hc, born + own, rtol=0, atol=1e-9 * np.abs(born + own).max())
    _, _, _, born_c, born_end = starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, dv=dv, **kw)
    assert np.allclose(born_c, born, rtol=0, atol=1e-9 * np.abs(born).max())
    assert np.abs(born_end).max() > 0  # the end state's tangent: J's and the direction's own
    assert np.allclose(hg, born_end + own_end, rtol=0, atol=1e-9 * np.abs(hg).max())


@pytest.mark.parametrize("layers", [True, False])
def test_born_differentiates_with_respect_to_v(layers):
    """starwave.torch.born's gradient with respect to v is vjp's derivative along dv: ⟨c, J(v) dv⟩'s
    central difference in v, with J's perturbation in the layers or not (Deepwave's scalar_born),
    and layers of a different width on each side."""
    rng = np.random.default_rng(5)
    v, w, src, rec, kw = case(2, rng)
    kw = dict(kw, layers=layers, pml_width=[4, 2, 0, 5])
    dv, change = rng.standard_normal(v.shape), rng.standard_normal(v.shape)
    c = rng.standard_normal((2, 4, 60))
    vt = torch.tensor(v, requires_grad=True)
    loss = (sw.born(vt, torch.tensor(dv), 10.0, 0.001, w, src, rec, **kw) * torch.tensor(c)).sum()
    (g,) = torch.autograd.grad(loss, vt)
    f = lambda x: np.sum(c * starwave.born(x, dv, 10.0, 0.001, w, src, rec, **kw))  # noqa: E731
    numeric = (f(v + 1e-2 * change) - f(v - 1e-2 * change)) / 2e-2
    assert abs(float((g.numpy() * change).sum()) - numeric) < 1e-6 * abs(numeric)


def test_what_second_derivatives_refuse():
    rng = np.random.default_rng(6)
    v, w, src, rec, kw = case(2, rng)
    c = np.zeros((2, 4, 60))
    with pytest.raises(ValueError, match="free_surface: second derivatives are not computed with one"):
        starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, dv=v, free_surface=True, **kw)
    with pytest.raises(ValueError, match=r"dv: an array of shape \(12, 14\)"):
        starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, dv=v[:3], **kw)
    bad = v.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="dv: NaN or Inf"):
        starwave.vjp_derivative(v, 10.0, 0.001, w, src, rec, c, dv=bad, **kw)
    big = np.full((3000, 3000), 2000.0)  # every step of two fields: the plan refuses before any work
    with pytest.raises(ValueError, match="this run needs .* at least"):
        starwave.vjp_derivative(big, 10.0, 0.001, np.sin(np.arange(4000) * 0.3), src[:1], rec, np.zeros((1, 4, 4000)))
