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
            raise NotImplementedError("starwave.torch: gradients with respect to the sources' or receivers' "
                                      "positions (and Born's wavelet) are not computed")
        return x.detach().cpu().numpy()
    return x


class _Model(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, initial, wavelet, spacing, dt, sources, receivers, options, final):
        start = None if initial is None else initial.detach().cpu().numpy()
        w = wavelet.detach().cpu().numpy()
        if start is None and not final:
            data = _starwave.model(v.detach().cpu().numpy(), spacing, dt, w, sources, receivers,
                                   **_forward_options(options))
            end = None
        else:
            data, end = _starwave.model(v.detach().cpu().numpy(), spacing, dt, w, sources, receivers,
                                        initial_state=start, final_state=True, **_forward_options(options))
        ctx.save_for_backward(v)
        ctx.call = (spacing, dt, w, sources, receivers, options, start)
        # Each input's dtype and device, for its gradient (not the tensors: nothing more is held).
        ctx.likes = [(x.dtype, x.device) for x in (v, initial if initial is not None else v, wavelet)]
        tensor = lambda x: _torch.from_numpy(_np.ascontiguousarray(x)).to(device=v.device, dtype=v.dtype)  # noqa
        if not final:
            return tensor(data)
        return tensor(data), tensor(end)

    @staticmethod
    def backward(ctx, grad, *grad_end):
        (v,) = ctx.saved_tensors
        spacing, dt, w, sources, receivers, options, start = ctx.call
        need_v, need_initial, need_wavelet = ctx.needs_input_grad[:3]
        end_cotangent = grad_end[0] if grad_end and grad_end[0] is not None else None
        if end_cotangent is not None and not bool(end_cotangent.detach().ne(0).any()):
            end_cotangent = None
        through_states = need_initial or need_wavelet or end_cotangent is not None or (
            need_v and start is not None and _np.any(start))
        out = [None] * 9
        if not (need_v or need_initial or need_wavelet):
            return tuple(out)
        numpy = lambda x: x.detach().cpu().numpy()  # noqa: E731
        tensor = lambda x, like: _torch.from_numpy(_np.ascontiguousarray(x)).to(  # noqa: E731
            dtype=like[0], device=like[1])
        if not through_states:
            g = _starwave.vjp(numpy(v), spacing, dt, w, sources, receivers, numpy(grad), **options)
            out[0] = _marked(tensor(g, ctx.likes[0]), v, grad)
            return tuple(out)
        g, g_initial, g_wavelet = _starwave.vjp(
            numpy(v), spacing, dt, w, sources, receivers, numpy(grad), initial_state=start,
            final_cotangent=None if end_cotangent is None else numpy(end_cotangent), states=True, **options)
        depends = (v, grad) if end_cotangent is None else (v, grad, end_cotangent)
        out[0] = _marked(tensor(g, ctx.likes[0]), *depends) if need_v else None
        out[1] = _marked(tensor(g_initial, ctx.likes[1]), *depends) if need_initial else None
        if need_wavelet:
            gw = g_wavelet.sum(axis=0) if w.ndim == 1 else g_wavelet
            out[2] = _marked(tensor(gw, ctx.likes[2]), *depends)
        return tuple(out)


def model(v, spacing, dt, wavelet, sources, receivers, initial_state=None, final_state=False, **options):
    """Differentiable starwave.model (module help): the data, or with `final_state` (data, the shots' last
    states); `initial_state` the shots' states to start from (starwave.model's layouts). Gradients reach v, the
    initial state and the wavelet (a tensor that requires one)."""
    if not isinstance(v, _torch.Tensor):
        raise TypeError("starwave.torch.model: v must be a torch.Tensor (starwave.model takes numpy arrays)")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise NotImplementedError("starwave.torch.model: option %s is not supported (supported: %s)" %
                                  (unknown[0], ", ".join(_OPTIONS)))
    if initial_state is not None and not isinstance(initial_state, _torch.Tensor):
        initial_state = _torch.as_tensor(_np.asarray(initial_state))
    if not isinstance(wavelet, _torch.Tensor):
        wavelet = _torch.as_tensor(_np.asarray(wavelet))
    options = {k: _array(x) for k, x in options.items()}
    return _Model.apply(v, initial_state, wavelet, _array(spacing), float(dt), _array(sources), _array(receivers),
                        options, bool(final_state))


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
