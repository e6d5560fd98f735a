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
    with pytest.raises(NotImplementedError, match="wavelet"):
        swt.model(v, h, dt, torch.tensor(w, requires_grad=True), s, r)
    with pytest.raises(ValueError, match="vp: dtype float16"):
        swt.model(v.half(), h, dt, w, s, r)
    with pytest.raises(TypeError, match="torch.Tensor"):
        swt.model(v.numpy(), h, dt, w, s, r)
