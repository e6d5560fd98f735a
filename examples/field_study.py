#!/usr/bin/env python3
"""examples/field_study.py [OUT] [ITERATIONS] — FWI of field-like data: the demo's Marmousi-like
model and survey (8 shots, 400 receivers, 2.2 s), the data made with a wavelet that is not the
file's (an 8 Hz Ricker rotated 60° and 20 ms late against the file's zero-phase 10 Hz Ricker),
each shot's strength ±30 % and 2 % noise. It inverts them (bands 4, 7, 10 Hz, ITERATIONS a band,
default 5, the water's 180 m fixed) given the true wavelets, given the file's guess as it is,
estimating the source per shot and for every shot (--estimate-source), with the trace
misfits, and with the estimate fitting only a window after the first arrivals (--window), and
prints each run's model error and the estimates against the true wavelets.
Everything goes to OUT (default field-study/): the files, and each run's pictures in
OUT/<run>_figures/. Runs build/bin/starwave, or $STARWAVE. About 7 minutes a run set of five
iterations a band on two cores.
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sw = os.environ.get("STARWAVE", os.path.join(here, "..", "build", "bin", "starwave"))
out = sys.argv[1] if len(sys.argv) > 1 else "field-study"
iterations = sys.argv[2] if len(sys.argv) > 2 else "5"
os.makedirs(out, exist_ok=True)
os.environ.setdefault("STARPU_SILENT", "1")


def run(*args):
    subprocess.run([sw, *args], check=True)


def path(name):
    return os.path.join(out, name)


# The demo's model, initial model (the truth smoothed, its water kept) and survey.
run("synth", "--kind", "marmousi-like", "--out", path("true.h5"), "--overwrite")
run("synth", "--kind", "marmousi-like", "--smooth", "100", "--keep-water", "--out", path("smooth.h5"), "--overwrite")
run("survey", "--model", path("true.h5"), "--nshots", "8", "--frequency", "10", "--out", path("survey.h5"),
    "--overwrite")

# The field's wavelets: a rotated, delayed 8 Hz Ricker, each shot's own strength.
with h5py.File(path("survey.h5")) as f:
    dt, nt = float(f.attrs["dt"]), int(f.attrs["nt"])
    guess = f["/source/wavelet"][...]
    nshots = f["/source/position"].shape[0]
t = np.arange(nt) * dt
a = (np.pi * 8.0 * (t - 1.5 / 8.0 - 0.02)) ** 2
ricker = (1 - 2 * a) * np.exp(-a)
n = 1 << int(np.ceil(np.log2(2 * nt)))
hilbert = np.real(np.fft.ifft(np.fft.fft(ricker, n) * (-1j * np.sign(np.fft.fftfreq(n)))))[:nt]
shape = np.cos(np.pi / 3) * ricker + np.sin(np.pi / 3) * hilbert
rng = np.random.default_rng(5)
strength = 1 + 0.3 * (2 * rng.random(nshots) - 1)
true_wavelets = strength[:, None] * shape[None, :]
shutil.copy(path("survey.h5"), path("field_survey.h5"))
with h5py.File(path("field_survey.h5"), "r+") as f:
    del f["/source/wavelet"]
    f["/source/wavelet"] = true_wavelets.astype(np.float32)
run("model", "--model", path("true.h5"), "--survey", path("field_survey.h5"), "--out", path("field.h5"),
    "--overwrite", "--quiet")
with h5py.File(path("field.h5"), "r+") as f:  # 2 % noise
    d = f["/data"][...]
    f["/data"][...] = (d + rng.standard_normal(d.shape) * 0.02 * np.sqrt(np.mean(d ** 2))).astype(np.float32)
shutil.copy(path("field.h5"), path("given.h5"))  # the same traces with the file's guess
with h5py.File(path("given.h5"), "r+") as f:
    del f["/source/wavelet"]
    f["/source/wavelet"] = guess

runs = [  # name, data, options
    ("true_wavelets", "field.h5", []),
    ("guess", "given.h5", []),
    ("estimated_per_shot", "given.h5", ["--estimate-source", "shot"]),
    ("estimated_for_all", "given.h5", ["--estimate-source", "band"]),
    ("correlation_guess", "given.h5", ["--misfit", "correlation"]),
    ("envelope_guess", "given.h5", ["--misfit", "envelope"]),
    ("correlation_estimated", "given.h5", ["--misfit", "correlation", "--estimate-source", "shot"]),
    ("windowed_estimated", "given.h5", ["--estimate-source", "shot", "--window", "0.1,1.0"]),
]
with h5py.File(path("true.h5")) as f:
    truth = f["/vp"][...].astype(float)
with h5py.File(path("smooth.h5")) as f:
    start = np.linalg.norm(f["/vp"][...] - truth) / np.linalg.norm(truth)
print(f"model error at the start: {start:.4f}")
for name, data, options in runs:
    run("fwi", "--model", path("smooth.h5"), "--data", path(data), "--out", path(name + ".h5"), "--bands", "4,7,10",
        "--iterations", iterations, "--fix-top", "180", "--true-model", path("true.h5"), "--figures",
        path(name + "_figures"), "--figures-every", "0", "--overwrite", "--quiet", *options)
    with h5py.File(path(name + ".h5")) as f:
        error = np.linalg.norm(f["/vp"][...] - truth) / np.linalg.norm(truth)
        line = f"{name:24s} model error {error:.4f}"
        if "/wavelet" in f:
            w = f["/wavelet"][...].astype(float)
            w = np.broadcast_to(w, true_wavelets.shape) if w.shape[0] == 1 else w
            corr = [np.dot(x, y) / np.linalg.norm(x) / np.linalg.norm(y) for x, y in zip(w, true_wavelets)]
            ratio = [np.linalg.norm(x) / np.linalg.norm(y) for x, y in zip(w, true_wavelets)]
            line += f"  wavelets: correlation {min(corr):.3f}–{max(corr):.3f}, strength {min(ratio):.3f}–{max(ratio):.3f}"
    print(line, flush=True)
