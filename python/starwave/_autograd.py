"""starwave's modelling as a torch.autograd.Function (starwave.torch.model; the module help says
how to call it): the data by starwave.model, their vector-Jacobian product by starwave.vjp."""
import numpy as _np
import torch as _torch

from . import _starwave

_OPTIONS = ("origin", "receiver_counts", "order", "pml_width", "free_surface", "internal_dt", "pml_velocity",
            "pml_frequency")


def _array(x):
    if isinstance(x, _torch.Tensor):
        if x.requires_grad:
            raise NotImplementedError("starwave.torch.model: gradients with respect to the wavelet, sources or "
                                      "receivers are not computed")
        return x.detach().cpu().numpy()
    return x


class _Model(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, spacing, dt, wavelet, sources, receivers, options):
        data = _starwave.model(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers, **options)
        ctx.save_for_backward(v)
        ctx.call = (spacing, dt, wavelet, sources, receivers, options)
        return _torch.from_numpy(_np.ascontiguousarray(data)).to(device=v.device, dtype=v.dtype)

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved_tensors
        spacing, dt, wavelet, sources, receivers, options = ctx.call
        g = _starwave.vjp(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers,
                          grad.detach().cpu().numpy(), **options)
        return _torch.from_numpy(g).to(device=v.device, dtype=v.dtype), None, None, None, None, None, None


def model(v, spacing, dt, wavelet, sources, receivers, **options):
    """Differentiable starwave.model (module help)."""
    if not isinstance(v, _torch.Tensor):
        raise TypeError("starwave.torch.model: v must be a torch.Tensor (starwave.model takes numpy arrays)")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise NotImplementedError("starwave.torch.model: option %s is not supported (supported: %s)" %
                                  (unknown[0], ", ".join(_OPTIONS)))
    options = {k: _array(x) for k, x in options.items()}
    return _Model.apply(v, _array(spacing), float(dt), _array(wavelet), _array(sources), _array(receivers), options)
