"""starwave's modelling and Born modelling as torch.autograd.Functions (starwave.torch.model and
starwave.torch.born; the module help says how to call them): the data by starwave.model and
starwave.born, their vector-Jacobian products by starwave.vjp (J's transpose), and those of vjp (second
derivatives, create_graph=True) by starwave.vjp_derivative."""
import numpy as _np
import torch as _torch

from . import _starwave

_OPTIONS = ("origin", "receiver_counts", "order", "pml_width", "free_surface", "internal_dt", "pml_velocity",
            "pml_frequency", "store_compression")
_BORN_OPTIONS = _OPTIONS + ("layers",)
_BACKWARD_ONLY = ("store_compression",)  # what the stored forward wavefield keeps: the modelling ignores it


_STORE_COMPRESSIONS = ("none", "fp16", "bf16", "zfp16", "zfp12", "zfp8")  # starwave.gradient's store_compression


def _forward_options(options):
    return {k: x for k, x in options.items() if k not in _BACKWARD_ONLY}


def _check_backward_only(call, options):
    """What only the backward uses, refused at the call if wrong (not later, at .backward())."""
    if "store_compression" in options and options["store_compression"] not in _STORE_COMPRESSIONS:
        raise ValueError("%s: store_compression must be one of %s (got %r)" %
                         (call, ", ".join(repr(x) for x in _STORE_COMPRESSIONS), options["store_compression"]))


def _check_precision(call, x):
    """v's dtype is the run's precision: one that numpy has no type for (bfloat16, float8) refused as the engine
    refuses float16, not with torch's conversion error."""
    try:
        _torch.empty(0, dtype=x.dtype).numpy()
    except TypeError:
        raise ValueError("%s: v: dtype %s is not supported: give float32 or float64 (its dtype is the run's "
                         "precision)" % (call, str(x.dtype).replace("torch.", ""))) from None


def _numpy(x):
    return None if x is None else x.detach().cpu().numpy()


def _tensor(x, like):
    return _torch.from_numpy(_np.ascontiguousarray(x)).to(dtype=like[0], device=like[1])


class _Vjp(_torch.autograd.Function):
    """vjp as a function of its inputs (v, initial states, wavelet, cotangent, final states' cotangent), so that
    a gradient starwave computed can be differentiated again (create_graph=True: double backward, Hessian-vector
    products): its own backward is starwave.vjp_derivative. `call`: (spacing, dt, sources, receivers, options),
    `states`: vjp through states (else the plain vjp, v's gradient alone)."""

    @staticmethod
    def forward(ctx, v, initial, wavelet, cotangent, end_cotangent, call, states):
        spacing, dt, sources, receivers, options = call
        w, start, c = _numpy(wavelet), _numpy(initial), _numpy(cotangent)
        ctx.save_for_backward(v, initial, wavelet, cotangent, end_cotangent)
        ctx.call = call
        ctx.likes = [(x.dtype, x.device) if x is not None else None for x in (v, initial, wavelet, cotangent,
                                                                              end_cotangent)]
        if not states:
            return _tensor(_starwave.vjp(_numpy(v), spacing, dt, w, sources, receivers, c, **options), ctx.likes[0])
        g, g_initial, g_wavelet = _starwave.vjp(_numpy(v), spacing, dt, w, sources, receivers, c, initial_state=start,
                                                final_cotangent=_numpy(end_cotangent), states=True, **options)
        gw = g_wavelet.sum(axis=0) if w.ndim == 1 else g_wavelet
        return (_tensor(g, ctx.likes[0]), _tensor(g_initial, ctx.likes[1] or ctx.likes[0]),
                _tensor(gw, ctx.likes[2]))

    @staticmethod
    def backward(ctx, dv, d_initial=None, d_wavelet=None):
        v, initial, wavelet, cotangent, end_cotangent = ctx.saved_tensors
        spacing, dt, sources, receivers, options = ctx.call
        # A compressed store rounds vjp's forward field: its derivative here is the exact gradient's.
        options = _forward_options(options)
        w = _numpy(wavelet)
        dw = _numpy(d_wavelet)
        if dw is not None and dw.ndim == 1:  # one wavelet for every shot: each shot's share of its gradient
            dw = _np.broadcast_to(dw, (cotangent.shape[0], dw.shape[0]))
        hv, h_initial, h_wavelet, h_cotangent, h_end = _starwave.vjp_derivative(
            _numpy(v), spacing, dt, w, sources, receivers, _numpy(cotangent), initial_state=_numpy(initial),
            final_cotangent=_numpy(end_cotangent), dv=_numpy(dv), d_initial_state=_numpy(d_initial), d_wavelet=dw,
            **options)
        need = ctx.needs_input_grad
        out = [None] * 7
        out[0] = _tensor(hv, ctx.likes[0]) if need[0] else None
        out[1] = _tensor(h_initial, ctx.likes[1]) if need[1] else None
        if need[2]:
            out[2] = _tensor(h_wavelet.sum(axis=0) if w.ndim == 1 else h_wavelet, ctx.likes[2])
        out[3] = _tensor(h_cotangent, ctx.likes[3]) if need[3] else None
        out[4] = _tensor(h_end, ctx.likes[4]) if need[4] else None
        return tuple(out)


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
        ctx.save_for_backward(v, initial, wavelet)
        ctx.call = (spacing, dt, sources, receivers, options)
        tensor = lambda x: _torch.from_numpy(_np.ascontiguousarray(x)).to(device=v.device, dtype=v.dtype)  # noqa
        if not final:
            return tensor(data)
        return tensor(data), tensor(end)

    @staticmethod
    def backward(ctx, grad, *grad_end):
        v, initial, wavelet = ctx.saved_tensors
        need_v, need_initial, need_wavelet = ctx.needs_input_grad[:3]
        end_cotangent = grad_end[0] if grad_end and grad_end[0] is not None else None
        if end_cotangent is not None and not bool(end_cotangent.detach().ne(0).any()):
            end_cotangent = None
        through_states = need_initial or need_wavelet or end_cotangent is not None or (
            need_v and initial is not None and bool(initial.detach().ne(0).any()))
        out = [None] * 9
        if not (need_v or need_initial or need_wavelet):
            return tuple(out)
        if not through_states:
            out[0] = _Vjp.apply(v, None, wavelet, grad, None, ctx.call, False)
            return tuple(out)
        g, g_initial, g_wavelet = _Vjp.apply(v, initial, wavelet, grad, end_cotangent, ctx.call, True)
        out[0] = g if need_v else None
        out[1] = g_initial if need_initial else None
        out[2] = g_wavelet if need_wavelet else None
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
    _check_precision("starwave.torch.model", v)
    _check_backward_only("starwave.torch.model", options)
    options = {k: _array(x) for k, x in options.items()}
    return _Model.apply(v, initial_state, wavelet, _array(spacing), float(dt), _array(sources), _array(receivers),
                        options, bool(final_state))


class _Born(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, dv, spacing, dt, wavelet, sources, receivers, options):
        data = _starwave.born(v.detach().cpu().numpy(), dv.detach().cpu().numpy(), spacing, dt, wavelet, sources,
                              receivers, **_forward_options(options))
        ctx.save_for_backward(v, dv)
        ctx.call = (spacing, dt, wavelet, sources, receivers, options)
        return _torch.from_numpy(_np.ascontiguousarray(data)).to(device=v.device, dtype=v.dtype)

    @staticmethod
    def backward(ctx, grad):
        v, dv = ctx.saved_tensors
        spacing, dt, wavelet, sources, receivers, options = ctx.call
        need_v, need_dv = ctx.needs_input_grad[:2]
        call = (spacing, dt, sources, receivers, options)
        w = _torch.as_tensor(_np.asarray(wavelet))
        g_v = g_dv = None
        if need_dv:  # Jᵀ grad: J is linear in dv
            g_dv = _Vjp.apply(v, None, w, grad, None, call, False)
        if need_v:  # ⟨grad, J(v) dv⟩ = ⟨dv, vjp(v, grad)⟩: vjp's derivative along dv
            if _torch.is_grad_enabled():
                raise NotImplementedError("starwave.torch.born: the derivative of born's gradient with respect to v "
                                          "(a third derivative of the modelling) is not computed")
            g_v = _Vjp.backward(_Replay(v, None, w, grad, call), dv)[0]
        return g_v, g_dv, None, None, None, None, None, None


class _Replay:
    """What _Vjp.backward reads of its context, for a call outside autograd (born's gradient with respect to v)."""

    def __init__(self, v, initial, wavelet, cotangent, call):
        self.saved_tensors = (v, initial, wavelet, cotangent, None)
        self.call = call
        self.likes = [(v.dtype, v.device), None, None, None, None]
        self.needs_input_grad = (True, False, False, False, False)


def born(v, dv, spacing, dt, wavelet, sources, receivers, **options):
    """Differentiable starwave.born (module help): with respect to dv (Jᵀ) and v (vjp's derivative)."""
    for name, x in (("v", v), ("dv", dv)):
        if not isinstance(x, _torch.Tensor):
            raise TypeError("starwave.torch.born: %s must be a torch.Tensor (starwave.born takes numpy arrays)" % name)
    unknown = sorted(set(options) - set(_BORN_OPTIONS))
    if unknown:
        raise NotImplementedError("starwave.torch.born: option %s is not supported (supported: %s)" %
                                  (unknown[0], ", ".join(_BORN_OPTIONS)))
    _check_precision("starwave.torch.born", v)
    _check_backward_only("starwave.torch.born", options)
    options = {k: _array(x) for k, x in options.items()}
    return _Born.apply(v, dv.to(dtype=v.dtype), _array(spacing), float(dt), _array(wavelet), _array(sources),
                       _array(receivers), options)
