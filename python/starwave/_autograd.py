"""starwave's modelling and Born modelling as torch.autograd.Functions (starwave.torch.model and
starwave.torch.born; the module help says how to call them): the data by starwave.model and
starwave.born, their vector-Jacobian products by starwave.vjp (J's transpose)."""
import numpy as _np
import torch as _torch

from . import _starwave

_OPTIONS = ("origin", "receiver_counts", "order", "pml_width", "free_surface", "internal_dt", "pml_velocity",
            "pml_frequency")
_BORN_OPTIONS = _OPTIONS + ("layers",)


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


class _Born(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, dv, spacing, dt, wavelet, sources, receivers, options):
        data = _starwave.born(v.detach().cpu().numpy(), dv.detach().cpu().numpy(), spacing, dt, wavelet, sources,
                              receivers, **options)
        ctx.save_for_backward(v)
        ctx.call = (spacing, dt, wavelet, sources, receivers, options)
        return _torch.from_numpy(_np.ascontiguousarray(data)).to(device=v.device, dtype=v.dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("starwave.torch.born: the gradient with respect to v (a second derivative of "
                                      "the modelling) is not computed; detach v, or use starwave.torch.model")
        (v,) = ctx.saved_tensors
        spacing, dt, wavelet, sources, receivers, options = ctx.call
        g = None
        if ctx.needs_input_grad[1]:  # Jᵀ grad: J is linear in dv
            g = _starwave.vjp(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers,
                              grad.detach().cpu().numpy(), **options)
            g = _torch.from_numpy(g).to(device=v.device, dtype=v.dtype)
        return None, g, None, None, None, None, None, None


def born(v, dv, spacing, dt, wavelet, sources, receivers, **options):
    """Differentiable starwave.born with respect to dv (module help)."""
    for name, x in (("v", v), ("dv", dv)):
        if not isinstance(x, _torch.Tensor):
            raise TypeError("starwave.torch.born: %s must be a torch.Tensor (starwave.born takes numpy arrays)" % name)
    unknown = sorted(set(options) - set(_BORN_OPTIONS))
    if unknown:
        raise NotImplementedError("starwave.torch.born: option %s is not supported (supported: %s)" %
                                  (unknown[0], ", ".join(_BORN_OPTIONS)))
    options = {k: _array(x) for k, x in options.items()}
    return _Born.apply(v, dv.to(dtype=v.dtype), _array(spacing), float(dt), _array(wavelet), _array(sources),
                       _array(receivers), options)
