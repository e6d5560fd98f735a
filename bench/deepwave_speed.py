#!/usr/bin/env python3
"""bench/deepwave_speed.py — `starwave model` as a whole process against Deepwave 0.0.27's
forward call alone, on docs/design.md §8's reference cases, in one run (docs/benchmarks.md).

    PYTHONPATH=DW /usr/bin/python3 bench/deepwave_speed.py [BUILD] [--runs N] [--steps-3d S] [--before B]

BUILD (default build) holds bin/starwave and bench/bench_project, which writes each case's
model and survey (bench_project --write). Rows: the 2-D case (600 × 250 + 20-cell layers,
order 8, float32, 2000 steps) with 1 shot on 1 core and 4 shots on 2 cores, and the 3-D case
(160³ + 20-cell layers, S steps, default 200) with 1 shot on 1 core. starwave: the wall time
of `starwave model` (reading the files, StarPU's start, the shots, writing the data) with
STARPU_NCPU cores, after one untimed run that calibrates StarPU's performance models. Deepwave:
the wall time of `deepwave.scalar(...)` alone on the same velocities, grid, time step, wavelet
and source and receiver cells (the nearest to starwave's positions), pml_freq 25 Hz, torch.set_num_threads(cores) (its OpenMP runs
over shots). Each figure is the median of N runs (default 3); the ratio is Deepwave / starwave.
DW is where bench/deepwave.sh built Deepwave. --before B: another build's `starwave model` on the
same files too (its own columns), e.g. a build of an earlier commit.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import torch

import deepwave


def write_case(build, folder, three_d, steps, shots):
    """The case's files, with the survey's time step cut to Deepwave's CFL limit (Courant
    number 0.6), so that both engines run the same `steps` time steps (each takes the given
    dt as its own: Deepwave would otherwise divide it, starwave's bound is looser)."""
    os.makedirs(folder, exist_ok=True)
    cmd = [os.path.join(build, "bench", "bench_project")] + (["--3d"] if three_d else [])
    subprocess.run(cmd + ["--write", folder, str(steps), str(shots)], check=True, stdout=subprocess.DEVNULL)
    with h5py.File(folder + "/model.h5", "r") as f:
        spacing, vmax = [float(h) for h in f["/vp"].attrs["spacing"]], float(np.max(f["/vp"][...]))
    with h5py.File(folder + "/data.h5", "r+") as f:
        dt, ratio = deepwave.common.cfl_condition_n(spacing, float(f.attrs["dt"]), vmax)
        f.attrs["dt"] = dt
    assert deepwave.common.cfl_condition_n(spacing, dt, vmax)[1] == 1


def starwave_seconds(build, folder, cores, runs):
    env = dict(os.environ, STARPU_SILENT="1", STARPU_NCPU=str(cores), STARPU_NCUDA="0",
               STARPU_HOME=os.path.join(folder, "starpu"))
    cmd = [os.path.join(build, "bin", "starwave"), "model", "--model", folder + "/model.h5", "--survey",
           folder + "/data.h5", "--out", folder + "/out.h5", "--overwrite"]
    times = []
    for r in range(runs + 1):  # the first calibrates StarPU's models
        start = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        if r > 0:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def deepwave_seconds(folder, cores, runs):
    with h5py.File(folder + "/model.h5", "r") as f:
        v = torch.from_numpy(f["/vp"][...].astype(np.float32))
        spacing = [float(h) for h in f["/vp"].attrs["spacing"]]
    with h5py.File(folder + "/data.h5", "r") as f:
        dt = float(f.attrs["dt"])
        wavelet = np.asarray(f["/source/wavelet"][...], np.float32)
        sources = np.asarray(f["/source/position"][...], np.float64)
        receivers = np.asarray(f["/receiver/position"][...], np.float64)
    h = np.asarray(spacing)
    shots = sources.shape[0]
    cells = lambda p: torch.from_numpy(np.rint(p / h).astype(np.int64))  # noqa: E731
    src = cells(sources.reshape(shots, -1, len(spacing)))
    rec = receivers.reshape(-1, receivers.shape[-2], len(spacing)) if receivers.ndim == 3 else receivers
    rec = cells(np.broadcast_to(rec, (shots,) + rec.shape[-2:]).copy())
    amp = torch.from_numpy(np.broadcast_to(wavelet.reshape(-1, wavelet.shape[-1])[:1],
                                           (shots, 1, wavelet.shape[-1])).copy())
    torch.set_num_threads(cores)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        deepwave.scalar(v, spacing, dt, source_amplitudes=amp, source_locations=src, receiver_locations=rec,
                        accuracy=8, pml_width=20, pml_freq=25.0)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--steps-3d", type=int, default=200)
    p.add_argument("--before", help="another build, timed on the same files")
    a = p.parse_args()
    rows = [("2-D, 1 shot, 1 core", False, 2000, 1, 1), ("2-D, 4 shots, 2 cores", False, 2000, 4, 2),
            ("3-D, 1 shot, 1 core (%d steps)" % a.steps_3d, True, a.steps_3d, 1, 1)]
    before = ("%12s %8s" % ("before s", "ratio")) if a.before else ""
    print("%-34s %12s %12s %8s %s" % ("case", "starwave s", "Deepwave s", "ratio", before))
    with tempfile.TemporaryDirectory(prefix="starwave-deepwave-speed.") as work:
        for i, (name, three_d, steps, shots, cores) in enumerate(rows):
            folder = os.path.join(work, str(i))
            write_case(a.build, folder, three_d, steps, shots)
            sw = starwave_seconds(a.build, folder, cores, a.runs)
            dw = deepwave_seconds(folder, cores, a.runs)
            old = ""
            if a.before:
                b = starwave_seconds(a.before, folder, cores, a.runs)
                old = "%12.3f %8.2f" % (b, dw / b)
            print("%-34s %12.3f %12.3f %8.2f %s" % (name, sw, dw, dw / sw, old), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
