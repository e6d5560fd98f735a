#!/usr/bin/env python3
"""bench/deepwave_compare.py — starwave.torch.scalar against Deepwave 0.0.27 on the same inputs.

    PYTHONPATH=build/python:DW /usr/bin/python3 bench/deepwave_compare.py --record FILE
        Deepwave's data (direct wave; point scatterer; accuracy 4 and 8), first gradient, and
        scalar_born's scattered data and gradient with respect to the scatter on small 2-D
        cases, with the inputs that made them, into FILE
        (tests/python/data/deepwave-0.0.27.npz: tests/python/test_deepwave.py checks starwave
        against it), and each case's relative L2 difference printed.
    ... --examples DOCS [--work DIR]
        Deepwave's own docs/example_forward_model.py and docs/example_fwi.py (DOCS: their
        folder), run twice on a generated model: as written (`import deepwave`) and with the
        import lines changed to `import starwave.torch as deepwave` / `from starwave.torch import
        scalar`; prints the data's and the first gradient's relative L2 difference. The model
        file is generated and the survey smaller (the substitutions below, the same for both).
    ... --time [--repeat N]
        the median time of one gradient (scalar + backward) of each on the same case, in one
        process, and their ratio.

DW is where bench/deepwave.sh built Deepwave. matplotlib and scipy (python3-matplotlib,
python3-scipy) are needed by Deepwave's examples only.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def rel(a, b):
    """‖a − b‖ / ‖b‖."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# ---- small cases: a homogeneous model and one scattering cell -----------------------------------------------------


def small_case():
    """The inputs of the recorded cases (all that tests/python/test_deepwave.py needs to rebuild them)."""
    shots, receivers, nt = 2, 10, 150
    src = np.zeros((shots, 1, 2), np.int64)
    src[:, 0, 0] = 5
    src[:, 0, 1] = [20, 60]
    rec = np.zeros((shots, receivers, 2), np.int64)
    rec[:, :, 0] = 5
    rec[:, :, 1] = np.arange(receivers) * 7 + 8
    t = np.arange(nt) * 0.002 - 0.05
    a = (np.pi * 20.0 * t) ** 2
    wavelet = (1 - 2 * a) * np.exp(-a)
    return dict(shape=np.array([60, 80]), h=5.0, dt=0.002, vp=2000.0, scatter_cell=np.array([40, 40]),
                scatter_vp=2600.0, max_vel=2600.0, pml_freq=20.0, src=src, rec=rec,
                amplitudes=np.repeat(wavelet[None, None, :], shots, axis=0))


def small_case_3d():
    """A 3-D direct wave: one shot, 6 receivers, 100 samples on 30 × 32 × 34 cells."""
    src = np.array([[[6, 15, 10]]], np.int64)
    rec = np.zeros((1, 6, 3), np.int64)
    rec[0, :, 0] = 6
    rec[0, :, 1] = 16
    rec[0, :, 2] = np.arange(6) * 3 + 12
    t = np.arange(100) * 0.002 - 0.05
    a = (np.pi * 20.0 * t) ** 2
    return dict(shape=np.array([30, 32, 34]), h=8.0, dt=0.002, vp=2000.0, max_vel=2000.0, pml_freq=20.0, src=src,
                rec=rec, amplitudes=((1 - 2 * a) * np.exp(-a))[None, None, :])


def models(case, dtype):
    v = torch.full(tuple(case["shape"]), case["vp"], dtype=dtype)
    scattered = v.clone()
    scattered[tuple(case["scatter_cell"])] = case["scatter_vp"]
    return v, scattered


def run(scalar, case, v, accuracy, dtype=torch.float64):
    out = scalar(v, case["h"], case["dt"], source_amplitudes=torch.from_numpy(case["amplitudes"]).to(dtype),
                 source_locations=torch.from_numpy(case["src"]), receiver_locations=torch.from_numpy(case["rec"]),
                 accuracy=accuracy, pml_freq=case["pml_freq"], max_vel=case["max_vel"])
    return out[-1]


def first_gradient(scalar, case, accuracy, dtype=torch.float64):
    """∂/∂v of ½‖d(v₀) − d(v_true)‖² at the homogeneous v₀, the scatterer's data observed."""
    v0, true = models(case, dtype)
    observed = run(scalar, case, true, accuracy, dtype).detach()
    v = v0.clone().requires_grad_()
    loss = 0.5 * ((run(scalar, case, v, accuracy, dtype) - observed) ** 2).sum()
    loss.backward()
    return v.grad.detach()


def born_models(case, dtype):
    """The homogeneous background and a smooth perturbation (a Gaussian of 150 m/s, 3 cells wide,
    at the scattering cell: away from the sources, whose cells Deepwave's Born source leaves out)."""
    v = torch.full(tuple(case["shape"]), case["vp"], dtype=dtype)
    z, x = torch.meshgrid(torch.arange(v.shape[0], dtype=dtype), torch.arange(v.shape[1], dtype=dtype), indexing="ij")
    cz, cx = (float(c) for c in case["scatter_cell"])
    return v, 150.0 * torch.exp(-((z - cz) ** 2 + (x - cx) ** 2) / 9.0)


def run_born(scalar_born, case, v, scatter, accuracy, dtype=torch.float64):
    out = scalar_born(v, scatter, case["h"], case["dt"], source_amplitudes=torch.from_numpy(case["amplitudes"]).to(dtype),
                      source_locations=torch.from_numpy(case["src"]), receiver_locations=torch.from_numpy(case["rec"]),
                      accuracy=accuracy, pml_freq=case["pml_freq"], max_vel=case["max_vel"])
    return out[-1], len(out)


def born_gradient(scalar_born, case, accuracy, dtype=torch.float64):
    """∂/∂scatter of ½‖B(scatter₀) − B(scatter_true)‖² at scatter₀ = 0: −Jᵀ of the true perturbation's Born data."""
    v, true = born_models(case, dtype)
    observed = run_born(scalar_born, case, v, true, accuracy, dtype)[0].detach()
    scatter = torch.zeros_like(v).requires_grad_()
    loss = 0.5 * ((run_born(scalar_born, case, v, scatter, accuracy, dtype)[0] - observed) ** 2).sum()
    loss.backward()
    return scatter.grad.detach()


def record(path):
    import deepwave
    import starwave.torch as sw

    case = small_case()
    out = dict(case)
    for accuracy in (4, 8):
        v, scattered = models(case, torch.float64)
        for name, model in (("direct", v), ("scatter", scattered)):
            d = run(deepwave.scalar, case, model, accuracy)
            out["%s_%d" % (name, accuracy)] = d.numpy().astype(np.float32)
            s = run(sw.scalar, case, model, accuracy)
            print("%-7s accuracy %d: data rel. L2 %.2e" % (name, accuracy, rel(s, d)))
        dw_s = out["scatter_%d" % accuracy] - out["direct_%d" % accuracy]
        sw_s = (run(sw.scalar, case, scattered, accuracy) - run(sw.scalar, case, v, accuracy)).numpy()
        print("scattered wave, accuracy %d: rel. L2 %.2e" % (accuracy, rel(sw_s, dw_s)))
    case3 = small_case_3d()
    v3 = torch.full(tuple(case3["shape"]), case3["vp"], dtype=torch.float64)
    d = run(deepwave.scalar, case3, v3, 4)
    out.update({"3d_" + k: x for k, x in case3.items()}, direct3d_4=d.numpy().astype(np.float32))
    print("3-D direct accuracy 4: data rel. L2 %.2e" % rel(run(sw.scalar, case3, v3, 4), d))
    g = first_gradient(deepwave.scalar, case, 4)
    out["gradient_4"] = g.numpy().astype(np.float32)
    print("first gradient, accuracy 4: rel. L2 %.2e" % rel(first_gradient(sw.scalar, case, 4), g))
    for accuracy in (4, 8):  # scalar_born: the scattered data of a smooth perturbation
        v, scatter = born_models(case, torch.float64)
        d, n = run_born(deepwave.scalar_born, case, v, scatter, accuracy)
        out["born_%d" % accuracy] = d.numpy().astype(np.float32)
        out["born_tuple_length"] = n
        print("scalar_born accuracy %d: data rel. L2 %.2e" % (accuracy, rel(run_born(sw.scalar_born, case, v, scatter,
                                                                                        accuracy)[0], d)))
    g = born_gradient(deepwave.scalar_born, case, 4)
    out["born_gradient_4"] = g.numpy().astype(np.float32)
    print("scalar_born gradient (scatter), accuracy 4: rel. L2 %.2e" % rel(born_gradient(sw.scalar_born, case, 4), g))
    np.savez_compressed(path, **out)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


# ---- Deepwave's own example flows ---------------------------------------------------------------------------------

# The same for both engines: a generated model file of 600 × 250 cells instead of Marmousi's 2301 × 751,
# the forward example's survey cut to the 20 shots, 100 receivers and 300 samples the FWI example
# inverts, one FWI epoch with its gradient kept before clipping, and the FWI's second attempt left out
# with its imports (it needs torchaudio, which Debian does not package).
SUBSTITUTIONS = [
    (r"ny = 2301\n", "ny = 600\n"), (r"nx = 751\n", "nx = 250\n"),
    (r"ny_full = 2301\n", "ny_full = 600\n"), (r"nx_full = 751\n", "nx_full = 250\n"),
    (r"n_shots = 115\n", "n_shots = 20\n"), (r"n_shots_full = 115\n", "n_shots_full = 20\n"),
    (r"n_receivers_per_shot = 384\n", "n_receivers_per_shot = 100\n"),
    (r"n_receivers_per_shot_full = 384\n", "n_receivers_per_shot_full = 100\n"),
    (r"nt = 750\n", "nt = 300\n"), (r"nt_full = 750\n", "nt_full = 300\n"),
    (r"receiver_amplitudes\[57\]", "receiver_amplitudes[10]"), (r"receiver_amplitudes\[:, 192\]", "receiver_amplitudes[:, 50]"),
    (r"n_epochs = 250\n", "n_epochs = 1\n"),
    (r"    loss.backward\(\)\n    torch.nn.utils.clip_grad_value_",
     "    loss.backward()\n    torch.save(v.grad.detach().clone(), 'first_gradient.pt')\n    torch.nn.utils.clip_grad_value_"),
    (r"\n## Second attempt.*", "\n"),
    (r"from scipy.signal import butter\n", ""), (r"from torchaudio.functional import biquad\n", ""),
]
STARWAVE_IMPORTS = [(r"\nimport deepwave\n", "\nimport starwave.torch as deepwave\n"),
                    (r"\nfrom deepwave import scalar\n", "\nfrom starwave.torch import scalar\n")]


def generated_model(ny, nx, dx):
    """Layers dipping along the first axis with a faster lens: float32 (ny, nx), depth along the second."""
    y, z = np.meshgrid(np.arange(ny) * dx, np.arange(nx) * dx, indexing="ij")
    depth = z - 0.15 * y - 20 * np.sin(y / 300.0)
    v = 1500 + 1.6 * np.clip(depth, 0, None)
    v += 600 * np.exp(-(((y - 1400) / 250) ** 2 + ((z - 600) / 80) ** 2))
    v[depth > 700] += 500
    return v.astype(np.float32)


def example_text(path, imports, matched):
    text = open(path).read()
    for pattern, replacement in SUBSTITUTIONS + imports:
        text, n = re.subn(pattern, replacement, text, flags=re.S)
        if n:
            matched.add(pattern)
    return text


def examples(docs, work):
    results = {}
    for engine, imports in (("deepwave", []), ("starwave", STARWAVE_IMPORTS)):
        folder = os.path.join(work, engine)
        os.makedirs(folder, exist_ok=True)
        generated_model(600, 250, 4.0).tofile(os.path.join(folder, "marmousi_vp.bin"))
        texts, matched = {}, set()
        for example in ("example_forward_model.py", "example_fwi.py"):
            texts[example] = example_text(os.path.join(docs, example), imports, matched)
        missing = [p for p, _ in SUBSTITUTIONS + imports if p not in matched]
        if missing:
            sys.exit("deepwave_compare.py: %s lack %r (not Deepwave 0.0.27's examples?)" % (docs, missing[0]))
        for example, text in texts.items():
            script = os.path.join(folder, example)
            with open(script, "w") as f:
                f.write(text)
            start = time.time()
            subprocess.run([sys.executable, script], cwd=folder, check=True, env=dict(os.environ, MPLBACKEND="Agg"))
            print("%s %s: %.1f s" % (engine, example, time.time() - start), flush=True)
        data = np.fromfile(os.path.join(folder, "marmousi_data.bin"), np.float32)
        results[engine] = (data, torch.load(os.path.join(folder, "first_gradient.pt")).numpy())
    (dw_data, dw_grad), (sw_data, sw_grad) = results["deepwave"], results["starwave"]
    print("forward example: data rel. L2 %.2e (20 shots × 100 receivers × 300 samples)" % rel(sw_data, dw_data))
    print("FWI example: first gradient rel. L2 %.2e" % rel(sw_grad, dw_grad))


# ---- the time of a gradient ---------------------------------------------------------------------------------------


def timing(repeat):
    import deepwave
    import starwave
    import starwave.torch as sw

    case = small_case()
    case.update(shape=np.array([300, 400]), h=5.0)  # 120,000 cells, 16 shots of 300 samples
    shots = 16
    case["src"] = np.zeros((shots, 1, 2), np.int64)
    case["src"][:, 0, 0] = 5
    case["src"][:, 0, 1] = np.linspace(10, 390, shots).astype(np.int64)
    case["rec"] = np.zeros((shots, 100, 2), np.int64)
    case["rec"][:, :, 0] = 5
    case["rec"][:, :, 1] = np.arange(100) * 4
    case["amplitudes"] = np.repeat(case["amplitudes"][:1, :, :], shots, axis=0)
    case["amplitudes"] = np.concatenate([case["amplitudes"], np.zeros_like(case["amplitudes"])], axis=2)

    def seconds(scalar):
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            first_gradient(scalar, case, 4, torch.float32)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    torch.set_num_threads(os.cpu_count())
    t_dw = seconds(deepwave.scalar)
    t_sw = seconds(sw.scalar)
    starwave.shutdown()
    print("one gradient (2 forwards + 1 backward; 300 × 400 cells, 16 shots, 300 samples, accuracy 4), median of %d:"
          % repeat)
    print("  deepwave.scalar %.2f s   starwave.torch.scalar %.2f s   ratio %.2f" % (t_dw, t_sw, t_dw / t_sw))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--record", metavar="FILE")
    p.add_argument("--examples", metavar="DOCS")
    p.add_argument("--work", metavar="DIR")
    p.add_argument("--time", action="store_true")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    if not (a.record or a.examples or a.time):
        p.error("say --record FILE, --examples DOCS or --time")
    if a.record:
        record(a.record)
    if a.examples:
        examples(a.examples, a.work or tempfile.mkdtemp(prefix="deepwave-examples-"))
    if a.time:
        timing(a.repeat)


if __name__ == "__main__":
    main()
