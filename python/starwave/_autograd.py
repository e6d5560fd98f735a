"""starwave's modelling and Born modelling as torch.autograd.Functions (starwave.torch.model and
starwave.torch.born; the module help says how to call them): the data by starwave.model and
starwave.born, their vector-Jacobian products by starwave.vjp (J's transpose)."""
import numpy as _np
import torch as _torch

from . import _starwave

_OPTIONS = ("origin", "receiver_counts", "order", "pml_width", "free_surface", "internal_dt", "pml_velocity",
            "pml_frequency", "store_compression")
_BORN_OPTIONS = _OPTIONS + ("layers",)
_BACKWARD_ONLY = ("store_compression",)  # what the stored forward wavefield keeps: the modelling ignores it


def _forward_options(options):
    return {k: x for k, x in options.items() if k not in _BACKWARD_ONLY}


class _NoSecondDerivative(_torch.autograd.Function):
    """A gradient starwave computed, marked as depending on what it depends on (the model, the cotangent):
    differentiating it again (double backward, create_graph=True) raises instead of giving zeros."""

    @staticmethod
    def forward(ctx, gradient, *inputs):
        return gradient.clone()

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("starwave.torch: the derivative of a gradient (double backward: a second "
                                  "derivative of the modelling) is not computed")


def _marked(gradient, *inputs):
    """`gradient` as backward returns it: under create_graph, one that refuses to be differentiated."""
    return _NoSecondDerivative.apply(gradient, *inputs) if _torch.is_grad_enabled() else gradient


def _array(x):
    if isinstance(x, _torch.Tensor):
        if x.requires_grad:
            raise NotImplementedError("starwave.torch.model: gradients with respect to the wavelet, sources or "
                                      "receivers are not computed")
        return x.detach().cpu().numpy()
    return x


class _Model(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, initial, spacing, dt, wavelet, sources, receivers, options, final):
        start = None if initial is None else initial.detach().cpu().numpy()
        if start is None and not final:
            data = _starwave.model(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers,
                                   **_forward_options(options))
            end = None
        else:
            data, end = _starwave.model(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers,
                                        initial_state=start, final_state=True, **_forward_options(options))
        ctx.save_for_backward(v)
        ctx.call = (spacing, dt, wavelet, sources, receivers, options)
        ctx.from_rest = start is None or not _np.any(start)
        tensor = lambda x: _torch.from_numpy(_np.ascontiguousarray(x)).to(device=v.device, dtype=v.dtype)  # noqa
        if not final:
            return tensor(data)
        return tensor(data), tensor(end)

    @staticmethod
    def backward(ctx, grad, *grad_end):
        if ctx.needs_input_grad[1]:
            raise NotImplementedError("starwave.torch.model: gradients with respect to the initial state (initial "
                                      "wavefields) are not computed")
        if grad_end and grad_end[0] is not None and bool(grad_end[0].detach().ne(0).any()):
            raise NotImplementedError("starwave.torch.model: gradients through the final state (final wavefields) "
                                      "are not computed")
        if not ctx.needs_input_grad[0]:
            return (None,) * 9
        if not ctx.from_rest:
            raise NotImplementedError("starwave.torch.model: the gradient with respect to v of a propagation from a "
                                      "non-zero initial state is not computed")
        (v,) = ctx.saved_tensors
        spacing, dt, wavelet, sources, receivers, options = ctx.call
        g = _starwave.vjp(v.detach().cpu().numpy(), spacing, dt, wavelet, sources, receivers,
                          grad.detach().cpu().numpy(), **options)
        return (_marked(_torch.from_numpy(g).to(device=v.device, dtype=v.dtype), v, grad),) + (None,) * 8


def model(v, spacing, dt, wavelet, sources, receivers, initial_state=None, final_state=False, **options):
    """Differentiable starwave.model (module help): the data, or with `final_state` (data, the shots' last
    states); `initial_state` the shots' states to start from (starwave.model's layouts)."""
    if not isinstance(v, _torch.Tensor):
        raise TypeError("starwave.torch.model: v must be a torch.Tensor (starwave.model takes numpy arrays)")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise NotImplementedError("starwave.torch.model: option %s is not supported (supported: %s)" %
                                  (unknown[0], ", ".join(_OPTIONS)))
    if initial_state is not None and not isinstance(initial_state, _torch.Tensor):
        initial_state = _torch.as_tensor(_np.asarray(initial_state))
    options = {k: _array(x) for k, x in options.items()}
    return _Model.apply(v, initial_state, _array(spacing), float(dt), _array(wavelet), _array(sources),
                        _array(receivers), options, bool(final_state))


class _Born(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, dv, spacing, dt, wavelet, sources, receivers, options):
        data = _starwave.born(v.detach().cpu().numpy(), dv.detach().cpu().numpy(), spacing, dt, wavelet, sources,
                              receivers, **_forward_options(options))
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
            g = _marked(_torch.from_numpy(g).to(device=v.device, dtype=v.dtype), v, grad)
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
