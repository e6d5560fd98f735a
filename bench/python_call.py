#!/usr/bin/env python3
"""bench/python_call.py — a gradient through `import starwave` against the same gradient through
the command line (docs/benchmarks.md, "Python").

  PYTHONPATH=BUILD/python /usr/bin/python3 bench/python_call.py [BUILD] [SHOTS] [RUNS]

The 2-D reference case (docs/design.md §8: 600 × 250, order 8, 2000 steps, float32) with SHOTS
shots (default 8), written by bench_project --write. The command line runs `starwave gradient`
RUNS times (default 3) and reports the seconds it prints (its task graph, after reading the files;
before writing the result); Python times `starwave.gradient` on the same arrays, after one call
that starts StarPU. Both use the workers StarPU's environment gives. Prints medians and the ratio.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

import starwave


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    shots = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.TemporaryDirectory(prefix="starwave-python-call.") as work:
        subprocess.run([os.path.join(build, "bench", "bench_project"), "--write", work, "2000", str(shots)],
                       check=True, stdout=subprocess.DEVNULL)
        model, data, out = work + "/model.h5", work + "/data.h5", work + "/g.h5"
        cli = []
        for _ in range(runs):
            r = subprocess.run([os.path.join(build, "bin", "starwave"), "gradient", "--model", model, "--data", data,
                                "--out", out, "--overwrite"], capture_output=True, text=True, check=True)
            cli.append(float(re.search(r"; ([0-9.e+-]+) s on ", r.stdout).group(1)))
        with h5py.File(model, "r") as f:
            v, spacing = f["/vp"][...].astype(np.float32), f["/vp"].attrs["spacing"]
        with h5py.File(data, "r") as f:
            dt = float(f.attrs["dt"])
            wavelet, sources = f["/source/wavelet"][...], f["/source/position"][...]
            receivers, observed = f["/receiver/position"][...], f["/data"][...]
    calls = []
    for _ in range(runs + 1):  # the first starts StarPU
        t = time.perf_counter()
        starwave.gradient(v, spacing, dt, wavelet, sources, receivers, observed)
        calls.append(time.perf_counter() - t)
    c, p = statistics.median(cli), statistics.median(calls[1:])
    print("2-D reference case, %d shots, %d runs each" % (shots, runs))
    print("command line: %s s (median %.3f)" % (" ".join("%.3f" % x for x in cli), c))
    print("python call:  %s s (median %.3f; the first, with StarPU's start, %.3f)" % (
        " ".join("%.3f" % x for x in calls[1:]), p, calls[0]))
    print("python / command line: %.3f" % (p / c))


if __name__ == "__main__":
    main()
