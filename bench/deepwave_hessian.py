"""bench/deepwave_hessian.py — second derivatives against Deepwave 0.0.27: the gradient of a data misfit and
its Hessian-vector product (torch's double backward, create_graph=True) from starwave.torch.scalar and from
Deepwave's scalar on the same 2-D inputs, and their relative L2 differences.

    STARPU_SILENT=1 PYTHONPATH=build/python:DW /usr/bin/python3 bench/deepwave_hessian.py

DW is where bench/deepwave.sh built Deepwave.
"""
import numpy as np
import torch
import deepwave
import starwave.torch as sw

torch.manual_seed(0)
dtype = torch.float64
shape = (60, 80); h = 5.0; dt = 0.002; nt = 150
v0 = torch.full(shape, 2000.0, dtype=dtype)
true = v0.clone(); true[35:45, 30:50] = 2300.0
src = torch.zeros(2, 1, 2, dtype=torch.long); src[:, 0, 0] = 5; src[:, 0, 1] = torch.tensor([20, 60])
rec = torch.zeros(2, 10, 2, dtype=torch.long); rec[:, :, 0] = 5; rec[:, :, 1] = torch.arange(10) * 7 + 8
t = torch.arange(nt, dtype=dtype) * dt - 0.05; a = (np.pi * 20 * t) ** 2
amp = ((1 - 2 * a) * torch.exp(-a))[None, None].repeat(2, 1, 1)
kw = dict(source_amplitudes=amp, source_locations=src, receiver_locations=rec, accuracy=4, pml_freq=20.0, max_vel=2600.0)
direction = torch.zeros(shape, dtype=dtype); direction[20:50, 20:60] = torch.rand(30, 40, dtype=dtype)
def hvp(prop):
    obs = prop(true, h, dt, **kw)[-1].detach()
    v = v0.clone().requires_grad_()
    loss = 0.5 * (prop(v, h, dt, **kw)[-1] - obs).square().sum()
    (g,) = torch.autograd.grad(loss, v, create_graph=True)
    (hv,) = torch.autograd.grad((g * direction).sum(), v)
    return g.detach(), hv
gd, hd = hvp(deepwave.scalar)
gs, hs = hvp(sw.scalar)
rel = lambda a, b: float((a - b).norm() / b.norm())
print("gradient rel. L2 %.4f, Hessian-vector product rel. L2 %.4f (interior %.4f)" % (
    rel(gs, gd), rel(hs, hd), rel(hs[5:-5, 5:-5], hd[5:-5, 5:-5])))
