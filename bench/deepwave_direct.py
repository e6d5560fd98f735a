"""bench/deepwave_direct.py — the absorbing layers beside Deepwave 0.0.27's: the error of the direct wave
against the analytic 2-D Green's function in Deepwave's own `test_direct` case (50 × 50 cells of 5 m,
1500 m/s, max_vel 2000, two shots whose two sources sit on the model's first two rows, next to the top
layer, receivers on the last rows, dt 0.1 ms, 9014 steps), for starwave and Deepwave, each accuracy and
layer width, with the error by ninth of the record (the late ninths hold what the layers send back).

    STARPU_SILENT=1 PYTHONPATH=build/python:DW /usr/bin/python3 bench/deepwave_direct.py SRC [WIDTH ...]

SRC is a Deepwave v0.0.27 tree (its tests/test_utils.py gives the sources, positions and the analytic
solution; it needs python3-scipy), DW where bench/deepwave.sh built Deepwave. Widths default to 20 40.
"""
import sys

import torch

sys.path.insert(0, sys.argv[1] + "/tests")
import deepwave  # noqa: E402
import test_utils  # noqa: E402

import starwave.torch as sw  # noqa: E402

BOUND = {2: 16, 4: 1.48, 6: 0.22, 8: 0.048}  # test_direct's bounds on the 2-D error's norm


def direct(scalar, accuracy, width, c=1500.0, freq=25.0, dx=(5.0, 5.0), dt=1e-4, nx=(50, 50)):
    torch.manual_seed(1)  # as Deepwave's run_direct: the same random source delays
    n = torch.tensor(nx)
    h = torch.tensor(dx)
    nt = int((2 * torch.norm(n.float() * h) / c + 0.35 + 2 / freq) / dt)
    xs = test_utils._set_coords(2, 2, list(nx))
    xr = test_utils._set_coords(2, 2, list(nx), "bottom")
    src = test_utils._set_sources(xs, freq, dt, nt)
    expected = torch.zeros(2, 2, nt)
    for s in range(2):
        for i in range(2):
            for r in range(2):
                expected[s, r] += test_utils.direct_2d_approx(xr[s, r], xs[s, i], h, dt, c, -src["amplitude"][s, i]).float()
    model = torch.full(nx, c)
    out = scalar(model, list(dx), dt, source_amplitudes=src["amplitude"], source_locations=src["locations"],
                 receiver_locations=xr, accuracy=accuracy, pml_width=width, max_vel=2000.0)[-1]
    return expected - out


def main():
    widths = [int(w) for w in sys.argv[2:]] or [20, 40]
    print("accuracy width  engine    error  (bound)  error by ninth of the record")
    for accuracy in (2, 4, 6, 8):
        for width in widths:
            for name, scalar in (("starwave", sw.scalar), ("deepwave", deepwave.scalar)):
                err = direct(scalar, accuracy, width)
                nt = err.shape[-1]
                ninths = [err[..., k * nt // 9:(k + 1) * nt // 9].norm().item() for k in range(9)]
                print("%8d %5d  %-8s %7.4f  (%g)  %s" % (accuracy, width, name, err.norm().item(), BOUND[accuracy],
                                                       " ".join("%.4f" % e for e in ninths)), flush=True)


if __name__ == "__main__":
    main()
