"""starwave — seismic modelling, exact gradients and reverse-time migration on StarPU.

The engine of the `starwave` command line, called with numpy arrays. Units are the command
line's: velocities in m/s, spacings and positions in m ([z, x] in 2-D, [z, y, x] in 3-D,
anywhere inside the model: off the grid too), times in s. The dtype of ``vp`` (float32 or
float64) is the run's precision. Every call runs on all the CPU cores and GPUs StarPU finds
(``STARPU_NCPU``, ``STARPU_NCUDA`` choose), the shots of one call spread over them; bad input
raises ``ValueError`` naming the argument.

    model(vp, spacing, dt, wavelet, sources, receivers, *, origin=None, receiver_counts=None,
          order=8, pml_width=20, free_surface=False, internal_dt=0.0, pml_velocity=0.0,
          pml_frequency=0.0)
        -> data (nshots, nrec, nt) of vp's dtype: sample n at t = n·dt
    born(vp, dv, spacing, dt, wavelet, sources, receivers, *, ... as model)
        -> J·dv (nshots, nrec, nt) of vp's dtype: the Born data, the derivative of model's data
           along the velocity perturbation dv (m/s, vp's shape); its transpose is vjp
    gradient(vp, spacing, dt, wavelet, sources, receivers, observed, *, origin=None,
             receiver_counts=None, weights=None, misfit='l2', store_compression='none',
             window=None, window_velocity=None, order=8, pml_width=20, free_surface=False,
             internal_dt=0.0)
        -> (misfit, gradient): Φ = ½ Σ w (d_syn − d_obs)² (or misfit='normalized',
           'correlation', 'envelope'; window='BEFORE,AFTER[,TAPER]' s: each trace around its
           arrival) and ∂Φ/∂v (shaped as vp, float64)
    vjp(vp, spacing, dt, wavelet, sources, receivers, cotangent, *, ... as gradient)
        -> Jᵀ·cotangent: ∂/∂vp of Σ cotangent · model(vp, …) (shaped as vp, float64)
    vjp_derivative(vp, spacing, dt, wavelet, sources, receivers, cotangent, *, initial_state=None,
                   final_cotangent=None, dv=None, d_initial_state=None, d_wavelet=None, ...)
        -> the cotangents of vjp's inputs (vp, initial_state, wavelet, cotangent, final_cotangent)
           for a cotangent of its outputs: second derivatives (double backward)
    rtm(vp, spacing, dt, wavelet, sources, receivers, observed, *, direct_wave="smooth",
        direct_smooth=0.0, imaging_condition="isic", illumination="both", ... as gradient)
        -> image (shaped as vp, float64): the image `starwave rtm` writes as /image
    shutdown()
        stops StarPU (it starts again at the next call; at exit it stops by itself)

``wavelet`` is (nt,) for every shot or (nshots, nt); ``receivers`` (nrec, ndim) for every shot
or (nshots, nrec, ndim); ``receiver_counts`` (nshots,) lets shot s record with its first
counts[s] receivers only (ragged acquisitions); ``weights`` (nrec,) or (nshots, nrec) multiply
the residual (0: a dead trace). ``pml_velocity`` (m/s; 0: the model's largest) and
``internal_dt`` (s; 0: from the model's largest velocity) fix the absorbing layers and the time
step, which the gradient holds fixed; ``pml_frequency`` (Hz; 0: the first wavelet's dominant
frequency) tunes the layers. ``starwave.torch`` puts ``model`` and ``born`` under PyTorch's
autograd.
"""
import atexit as _atexit

from ._starwave import born, gradient, model, rtm, shutdown, vjp, vjp_derivative

__all__ = ["model", "born", "gradient", "vjp", "vjp_derivative", "rtm", "shutdown"]
_atexit.register(shutdown)
