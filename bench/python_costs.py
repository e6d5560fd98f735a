"""The Python calls' costs in forwards (bench/, never a timed test): model, vjp (plain and through
states), born and vjp_derivative (second derivatives) on one 2-D shot, the median of three calls
each, whole calls from Python as a user makes them.

    STARPU_SILENT=1 STARPU_NCPU=1 PYTHONPATH=build/python python3 bench/python_costs.py
"""
import time, numpy as np, starwave
rng = np.random.default_rng(0)
v = (2000 + 500 * rng.random((200, 300))).astype(np.float32)
nt = 1000; dt = 0.001
t = np.arange(nt) * dt - 0.05; a = (np.pi * 15 * t) ** 2; w = (1 - 2 * a) * np.exp(-a)
src = np.array([[20.0, 1500.0]]); rec = np.stack([np.full(100, 20.0), np.arange(100) * 30.0], 1)
kw = dict(pml_frequency=15.0)
d = starwave.model(v, 10.0, dt, w, src, rec, **kw)
c = rng.standard_normal(d.shape).astype(np.float32)
dv = rng.standard_normal(v.shape)
def med(f, n=3):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return sorted(ts)[n // 2]
tm = med(lambda: starwave.model(v, 10.0, dt, w, src, rec, **kw))
tv = med(lambda: starwave.vjp(v, 10.0, dt, w, src, rec, c, **kw))
tvs = med(lambda: starwave.vjp(v, 10.0, dt, w, src, rec, c, states=True, **kw))
tb = med(lambda: starwave.born(v, dv, 10.0, dt, w, src, rec, **kw))
th = med(lambda: starwave.vjp_derivative(v, 10.0, dt, w, src, rec, c, dv=dv, **kw))
print("model %.3f s, vjp %.3f (%.2f F), vjp states %.3f (%.2f F), born %.3f (%.2f F), vjp_derivative %.3f (%.2f F)" % (tm, tv, tv/tm, tvs, tvs/tm, tb, tb/tm, th, th/tm))
