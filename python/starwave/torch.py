"""starwave.torch — starwave's modelling under PyTorch's autograd.

    starwave.torch.model(v, spacing, dt, wavelet, sources, receivers, **options) -> data
        (with initial_state=…, final_state=True: starwave.model's states, (data, final states))
    starwave.torch.born(v, dv, spacing, dt, wavelet, sources, receivers, **options) -> J·dv
        (the Born data; backward gives dv.grad = Jᵀ·grad, J being linear in dv, and v.grad the
        gradient of ⟨grad, J(v)·dv⟩ in v; differentiating that again is not computed)
    starwave.torch.scalar(v, grid_spacing, dt, source_amplitudes, source_locations,
                          receiver_locations, accuracy=4, pml_width=20, pml_freq=None, max_vel=None, ...)
        -> Deepwave 0.0.27's tuple, the receiver data [shot, receiver, time] last
    starwave.torch.Scalar(v, grid_spacing, v_requires_grad=False)(dt, source_amplitudes, ...)
    starwave.torch.scalar_born(v, scatter, grid_spacing, dt, source_amplitudes, source_locations,
                               receiver_locations, bg_receiver_locations=None, accuracy=4, ...)
        -> Deepwave 0.0.27's tuple, the background's receiver data and the scattered data last
    starwave.torch.ScalarBorn(v, scatter, grid_spacing, scatter_requires_grad=False)(dt, ...)

`v` is a tensor (nz, nx) or (nz, ny, nx) of float32 or float64 on any device; the data come back
(nshots, nrec, nt) of the same dtype on the same device, and `loss.backward()` fills `v.grad`
with the exact adjoint through the same task graph (starwave.vjp). The other arguments and the
options are starwave.model's (numpy arrays or tensors; positions in m). For an inversion, fix
the time step and the absorbing layers' velocity (`internal_dt`, `pml_velocity`): by default
they follow the model's largest velocity, which the gradient holds fixed. A wavelet tensor and
an initial state that require a gradient get one, and a loss on the final states
(final_state=True) reaches v, the wavelet and the initial state. The computation runs where StarPU runs it (every CPU core and
GPU it finds), whatever the tensor's device.

`scalar`, `Scalar`, `scalar_born` and `ScalarBorn` take Deepwave's call (`scatter`: the velocity
perturbation; its gradient is Jᵀ, v's that of ⟨grad, J(v)·scatter⟩): locations are cell indices, a source adds −v²Δt²·s at
its cell, a receiver records its cell before each step, `dt` is cut into inner steps at Courant
number 0.6 with Deepwave's frequency-domain resampling (`freq_taper_frac`, `time_pad_frac`,
`time_taper`), `pml_freq` defaults to 25 Hz. `scalar` takes Deepwave's initial wavefields
(wavefield_0, wavefield_m1, psi*_m1, zeta*_m1) and returns its final ones in Deepwave's places,
gradients flowing through them and to the source amplitudes, and a model per shot;
`scalar_born` returns None there; `survey_pad` and `origin` cut the model to the survey's box.
Second derivatives (create_graph=True) are starwave.vjp_derivative's. Callbacks and different PML widths
per edge raise NotImplementedError. `import starwave.torch as deepwave` also gives
`deepwave.wavelets.ricker`, `deepwave.common.cosine_taper_end` and `deepwave.IGNORE_LOCATION`.
"""
import types as _types

from ._autograd import born, model
from ._deepwave import IGNORE_LOCATION, Scalar, ScalarBorn, cosine_taper_end, ricker, scalar, scalar_born

wavelets = _types.SimpleNamespace(ricker=ricker)
common = _types.SimpleNamespace(cosine_taper_end=cosine_taper_end, IGNORE_LOCATION=IGNORE_LOCATION)
__all__ = ["model", "born", "scalar", "Scalar", "scalar_born", "ScalarBorn", "IGNORE_LOCATION", "wavelets", "common"]
