#!/usr/bin/env python3
"""bench/project.py — projected time of a gradient on 1 … N GPUs and on several nodes (docs/cluster.md).

  bench/project.py [--case 2d|3d] [--shots S] [--gpus 1,2,4,8] [--nodes 1,2,4,16]
                   [--gpus-per-node 4] [--network 25GB/s,2us] [--measured SECONDS@SHOTS]
                   [--calibration DIR --host NAME] [--sim-build build-sim] [--svg FILE]

One node is simulated by StarPU-SimGrid: bench_project of the simulation build runs the
reference case's gradient task graph on a machine of G GPUs made from one measured GPU
(bench/simulated_machine.py): StarPU schedules the tasks and moves the data over each GPU's
link as in a real run; each task takes its calibrated time. The GPU's concurrency (8 CUDA
workers run 8 shots at once; StarPU 1.3.10's simulation runs one) is one factor K, found by
matching the simulated one-GPU run to the measured one (--measured: seconds of a gradient of
SHOTS shots on the calibrated GPU; by default the calibration folder's `measured` file, which
bench/calibrate.sh writes).

Nodes are not simulated (the simulation build has no MPI): a run on N nodes is the simulated
time of the busiest node's shots on its GPUs plus the reduction's network time after them —
the gradient (∂Φ/∂v and the illumination, 8 bytes a model cell) sent along each edge of the
reduction tree whose halves live on different nodes, at the given bandwidth and latency, the
busiest node's receives one after another. Both shot layouts are projected: blocks of
consecutive shots per node (starwave's, graph::owner) and round-robin (shot s on node s mod N).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simulated_machine  # noqa: E402

CASES = {
    # steps, model cells (the reduction's message is 8 bytes a cell)
    "2d": {"steps": 2000, "cells": 600 * 250, "flag": []},
    "3d": {"steps": 100, "cells": 160**3, "flag": ["--3d"]},
}


def fail(message):
    sys.stderr.write("bench/project.py: %s\n" % message)
    sys.exit(2)


def int_list(text, what):
    try:
        v = [int(x) for x in text.split(",")]
    except ValueError:
        fail("%s: a list of whole numbers like 1,2,4,8, not %r" % (what, text))
    if not v or min(v) < 1:
        fail("%s: every entry must be ≥ 1" % what)
    return v


def network(text):
    """'25GB/s,2us' → (bytes/s, seconds)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*GB/s\s*,\s*([0-9.]+)\s*us\s*", text)
    if not m or float(m.group(1)) <= 0:
        fail("--network: BANDWIDTH GB/s,LATENCY us like 25GB/s,2us, not %r" % text)
    return float(m.group(1)) * 1e9, float(m.group(2)) * 1e-6


class Simulator:
    def __init__(self, o, home):
        self.o, self.home, self.k, self.cache, self.spread = o, home, 1.0, {}, {}
        self.binary = os.path.join(o.sim_build, "bench", "bench_project")
        if not os.access(self.binary, os.X_OK):
            fail("%s: no such program (build the simulation build's bench_project: docs/cluster.md)" % self.binary)

    def seconds(self, gpus, shots):
        """The median of three simulations, the task times scaled by K and K ± 1 %: a schedule can
        flip on a tiny change of a task's time (one GPU ending with a shot more than another)."""
        runs = sorted(self.one(gpus, shots, self.k * f) for f in (0.99, 1.0, 1.01))
        self.spread[(gpus, shots)] = (runs[0], runs[-1])
        return runs[1]

    def one(self, gpus, shots, k):
        key = (gpus, shots, k)
        if key in self.cache:
            return self.cache[key]
        made = subprocess.run([sys.executable, simulated_machine.__file__, self.o.calibration, self.o.host, self.home,
                               str(gpus), "--throughput", repr(k)])
        if made.returncode != 0:
            sys.exit(2)  # simulated_machine.py said why
        env = dict(os.environ, STARPU_SILENT="1", STARPU_HOME=self.home, STARPU_HOSTNAME="simulated",
                   STARPU_PERF_MODEL_HOMOGENEOUS_CUDA="1", STARPU_NCPU="0", STARPU_NCUDA=str(gpus),
                   STARPU_NWORKER_PER_CUDA="1")
        case = CASES[self.o.case]
        r = subprocess.run([self.binary] + case["flag"] + [str(self.o.steps), str(shots)], env=env,
                           capture_output=True, text=True, timeout=1200)
        m = re.search(r": ([0-9.e+-]+) s$", r.stdout.strip())
        if r.returncode != 0 or not m:
            tail = [l for l in r.stderr.splitlines() if "xbt_cfg" not in l and "surf_parse" not in l][-5:]
            fail("the simulated run of %d shots on %d GPUs failed:\n%s" % (shots, gpus, "\n".join(tail)))
        self.cache[key] = float(m.group(1))
        return self.cache[key]


def reduction_receives(shots, nodes, contiguous):
    """Messages each node receives in the reduction tree over shot index (halves split at powers of two)."""
    def owner(s):
        return s * nodes // shots if contiguous else s % nodes

    received = [0] * nodes

    def tree(lo, hi):  # the root's shot: the lowest index, as in the task graph; returns the depth in messages
        if hi - lo <= 1:
            return 0
        half = 1 << ((hi - lo - 1).bit_length() - 1)  # the largest power of two below hi − lo
        left, right = tree(lo, lo + half), tree(lo + half, hi)
        cross = owner(lo) != owner(lo + half)
        if cross:
            received[owner(lo)] += 1
        return max(left, right) + (1 if cross else 0)

    cross_depth = tree(0, shots)
    return max(received), cross_depth


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--case", choices=sorted(CASES), default="2d")
    a.add_argument("--shots", type=int, default=64)
    a.add_argument("--steps", type=int)
    a.add_argument("--node-shots", type=int, help="shots of the runs on nodes (default: --shots)")
    a.add_argument("--gpus", default="1,2,4,8")
    a.add_argument("--nodes", default="1,2,4,16")
    a.add_argument("--gpus-per-node", type=int, default=4)
    a.add_argument("--network", default="25GB/s,2us")
    a.add_argument("--measured")
    here = os.path.dirname(os.path.abspath(__file__))
    a.add_argument("--calibration", default=os.path.join(here, "calibration", "h200-2026-11-27"))
    a.add_argument("--host", default="vm")
    a.add_argument("--sim-build", default="build-sim")
    a.add_argument("--svg")
    o = a.parse_args()
    case = CASES[o.case]
    o.steps = o.steps or case["steps"]
    o.node_shots = o.node_shots or o.shots
    gpus, nodes = int_list(o.gpus, "--gpus"), int_list(o.nodes, "--nodes")
    bandwidth, latency = network(o.network)
    if max(gpus + [o.gpus_per_node]) > simulated_machine.MAX_GPUS:
        fail("at most %d GPUs on a simulated node (StarPU's STARPU_MAXCUDADEVS)" % simulated_machine.MAX_GPUS)
    if min(o.shots, o.node_shots, o.gpus_per_node) < 1:
        fail("--shots, --node-shots and --gpus-per-node must be ≥ 1")
    path = os.path.join(o.calibration, "measured")
    if not o.measured and os.path.isfile(path):  # the calibration's own measurement (bench/calibrate.sh)
        with open(path) as f:
            for line in f:
                if line.split()[:1] == [o.case]:
                    o.measured = line.split()[1]
    if not o.measured:
        fail("%s has no %s gradient time: give --measured SECONDS@SHOTS" % (path, o.case))
    m = re.fullmatch(r"([0-9.]+)@([0-9]+)", o.measured)
    if not m:
        fail("--measured: SECONDS@SHOTS like 0.642@32, not %r" % o.measured)
    measured, measured_shots = float(m.group(1)), int(m.group(2))

    with tempfile.TemporaryDirectory(prefix="starwave-project.") as home:
        sim = Simulator(o, home)
        unscaled = sim.one(1, measured_shots, 1.0)
        sim.k = unscaled / measured
        print("# %s reference case, %d steps, %d shots; one GPU: %s (%s); K = %.2f (simulated %.3f s unscaled "
              "against %.3f s measured for %d shots)" % (o.case, o.steps, o.shots, o.calibration, o.host, sim.k,
                                                         unscaled, measured, measured_shots))
        one = sim.seconds(1, o.shots)
        rows = []
        print("\n%-6s %12s %17s %9s %11s" % ("GPUs", "gradient s", "(K ± 1 %)", "speed-up", "efficiency"))
        for g in gpus:
            t = sim.seconds(g, o.shots)
            lo, hi = sim.spread[(g, o.shots)]
            rows.append(("gpus", g, t))
            print("%-6d %12.4f %8.4f–%-8.4f %9.2f %10.1f%%" % (g, t, lo, hi, one / t, 100 * one / t / g))
        paying = [g for g in gpus if one / sim.seconds(g, o.shots) / g >= 0.8]
        if max(paying or [1]) == max(gpus):
            print("every one-node configuration is ≥ 80 %% efficient, up to %d GPUs" % max(gpus))
        else:
            print("more GPUs stop paying (< 80 %% efficiency) beyond %d GPUs on one node" % max(paying or [1]))

        print("\n%d shots on nodes of %d GPUs; efficiency against one node" % (o.node_shots, o.gpus_per_node))
        print("%-6s %-6s %-11s %-10s %12s %9s %11s %8s" % ("nodes", "GPUs", "layout", "network", "gradient s",
                                                            "speed-up", "efficiency", "net ms"))
        base = sim.seconds(o.gpus_per_node, o.node_shots)  # one node
        bytes_ = 8.0 * case["cells"]
        for n in nodes:
            node = sim.seconds(o.gpus_per_node, -(-o.node_shots // n))
            for contiguous in (False, True):
                received, depth = reduction_receives(o.node_shots, n, contiguous)
                for f in (0.5, 1.0, 1.5):
                    net = received * bytes_ / (bandwidth * f) + depth * latency if n > 1 else 0.0
                    t = node + net
                    rows.append(("nodes", n, t, contiguous, f))
                    print("%-6d %-6d %-11s %-10s %12.4f %9.2f %10.1f%% %8.2f" % (
                        n, n * o.gpus_per_node, "blocks" if contiguous else "round-robin", "%.0f%%" % (100 * f), t,
                        base / t, 100 * base / t / n, 1e3 * net))
        for contiguous in (False, True):
            good = [r[1] for r in rows if r[0] == "nodes" and r[3] == contiguous and r[4] == 1.0
                    and base / r[2] / r[1] >= 0.8]
            print("%s: ≥ 80 %% efficient up to %d nodes of those projected" % (
                "blocks (starwave's)" if contiguous else "round-robin", max(good or [1])))
        if o.svg:
            draw(o, rows, one, base)


def draw(o, rows, one, base):
    """Efficiency against GPUs: one node (left), nodes × GPUs (right, the network at 50, 100 and
    150 % of --network as thin, thick and thin lines)."""
    w, h, pad = 760, 344, 52
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
             'font-size="11">' % (w, h), '<rect width="100%" height="100%" fill="white"/>']
    lo_eff = 50

    def panel(x0, title, series, xs, legend):
        pw, ph = w / 2 - 1.4 * pad, h - 2.2 * pad
        xmin, xmax = min(xs), max(xs)
        X = lambda v: x0 + pw * math.log2(v / xmin) / max(1, math.log2(xmax / xmin))  # noqa: E731
        Y = lambda e: pad + ph - ph * (min(e, 105) - lo_eff) / (105 - lo_eff)  # noqa: E731
        parts.append('<text x="%.0f" y="%.0f" font-size="12" font-weight="bold">%s</text>' % (x0, pad - 22, title))
        for e in range(lo_eff, 101, 10):
            parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (X(xmin), Y(e), X(xmax), Y(e)))
            parts.append('<text x="%.1f" y="%.1f" text-anchor="end">%d %%</text>' % (x0 - 4, Y(e) + 4, e))
        for v in xs:
            parts.append('<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>' % (X(v), pad + ph + 14, v))
        for colour, width, points in series:
            path = " ".join("%.1f,%.1f" % (X(x), Y(e)) for x, e in points)
            parts.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"/>' % (path, colour, width))
            if width >= 2:
                for x, e in points:
                    parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (X(x), Y(e), colour))
        for i, (colour, text) in enumerate(legend):
            y = pad + ph - 12 - 14 * (len(legend) - 1 - i)
            parts.append('<rect x="%.1f" y="%.1f" width="10" height="3" fill="%s"/>' % (x0 + 8, y - 4, colour))
            parts.append('<text x="%.1f" y="%.1f">%s</text>' % (x0 + 22, y, text))
        parts.append('<text x="%.1f" y="%.1f" text-anchor="middle">GPUs (efficiency against %s)</text>' % (
            x0 + pw / 2, pad + ph + 32, "one GPU" if xmin == 1 else "one node"))

    gp = [(r[1], 100 * one / r[2] / r[1]) for r in rows if r[0] == "gpus"]
    sweep = [(1, 100), (2, 92.5), (4, 87.5), (8, 81.25)]  # SWEEP's published 1.85, 3.5, 6.5× (DDP)
    panel(pad, "%s, %d shots, one node" % (o.case.upper(), o.shots),
          [("#ff7f0e", 2, sweep), ("#1f77b4", 2, gp)],
          sorted(set([1] + [x for x, _ in gp] + [2, 4, 8])),
          [("#1f77b4", "starwave, projected"), ("#ff7f0e", "SWEEP (DDP), published")])
    g = o.gpus_per_node
    series, xs = [], set()
    for colour, contiguous in (("#d62728", False), ("#2ca02c", True)):
        for f in (0.5, 1.0, 1.5):
            pts = [(r[1] * g, 100 * base / r[2] / r[1]) for r in rows
                   if r[0] == "nodes" and r[3] == contiguous and r[4] == f]
            xs.update(x for x, _ in pts)
            series.append((colour, 2 if f == 1.0 else 0.8, pts))
    panel(w / 2 + pad / 2, "%d shots, nodes × %d GPUs, network %s" % (o.node_shots, g, o.network), series, sorted(xs),
          [("#2ca02c", "blocks of consecutive shots per node (starwave's)"),
           ("#d62728", "round-robin: shot s on node s mod N")])
    parts.append('<text x="%d" y="%d" fill="#666" font-size="10">%s — %s, %s</text>' % (
        pad, h - 8, time.strftime("%Y-%m-%d"), "bench/project.py " + " ".join(sys.argv[1:]),
        "projected from the calibration in " + os.path.basename(os.path.normpath(o.calibration))))
    parts.append("</svg>\n")
    with open(o.svg, "w") as f:
        f.write("\n".join(parts))


if __name__ == "__main__":
    main()
