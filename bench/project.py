#!/usr/bin/env python3
"""bench/project.py — projected time of a gradient on 1 … N GPUs and on several nodes (docs/cluster.md).

  bench/project.py [--case 2d|3d] [--shots S] [--gpus 1,2,4,8] [--nodes 1,2,4,16]
                   [--gpus-per-node 4] [--network 25GB/s,2us] [--measured SECONDS@SHOTS]
                   [--calibration DIR --host NAME] [--build build] [--sim-build build-sim] [--svg FILE]

The reference case's gradient (bench_project --write: its model and a data file of S shots)
projected by `starwave plan gradient … --gpus … --nodes …` (drivers/project.cpp): one node
simulated by StarPU-SimGrid on a machine of G copies of the calibrated GPU, its concurrency
fitted to the measured one-GPU time (--measured: seconds of a gradient of SHOTS shots on the
calibrated GPU; by default the calibration folder's `measured` file, which bench/calibrate.sh
writes; K is fitted on a case of SHOTS shots, then given to the projections with --concurrency);
nodes as the busiest node's simulated shots plus the reduction's messages.

Besides starwave's layout of shots on nodes (blocks of consecutive shots, graph::owner), this
script projects round-robin (shot s on node s mod N) from the same simulated node times, for
comparison, and draws the picture (--svg).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

CASES = {
    # steps, model cells (the reduction's message is 8 bytes a cell)
    "2d": {"steps": 2000, "cells": 600 * 250, "flag": []},
    "3d": {"steps": 100, "cells": 160**3, "flag": ["--3d"]},
}
MAX_GPUS = 16  # STARPU_MAXCUDADEVS of the simulation build


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


def calibration_options(o):
    """The numerical options the calibration's runs were made with (its `options` file, one line of
    starwave options; none when absent): the projected runs take them too, so that their tasks have
    the sizes that were measured."""
    path = os.path.join(o.calibration, "options")
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return f.read().split()


def plan(o, shots, extra):
    """starwave plan gradient on the reference case of `shots` shots; its output's lines."""
    with tempfile.TemporaryDirectory(prefix="starwave-project.") as work:
        subprocess.run([os.path.join(o.build, "bench", "bench_project")] + CASES[o.case]["flag"] +
                       ["--write", work, str(o.steps), str(shots)], check=True, stdout=subprocess.DEVNULL)
        command = [os.path.join(o.build, "bin", "starwave"), "plan", "gradient", "--model", work + "/model.h5",
                   "--data", work + "/data.h5", "--calibration", o.calibration, "--host", o.host,
                   "--simulator", os.path.join(o.sim_build, "bin", "starwave-sim")] + calibration_options(o) + extra
        r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        fail("starwave plan failed: %s" % (r.stderr.strip().splitlines() or ["(no message)"])[-1])
    return r.stdout.splitlines()


def concurrency(o, seconds, shots):
    """K fitted on the measured run itself (a survey of `shots` shots: the first shots of a larger
    survey sit elsewhere, and a 3-D source off the grid has task sizes of its own)."""
    for line in plan(o, shots, ["--gpus", "1", "--measured", "%s@%d" % (seconds, shots)]):
        m = re.search(r"concurrency K = ([0-9.e+-]+)", line)
        if m:
            return m.group(1)
    fail("starwave plan did not say the GPU's concurrency K")


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
    a.add_argument("--build", default="build")
    a.add_argument("--sim-build", default="build-sim")
    a.add_argument("--svg")
    o = a.parse_args()
    case = CASES[o.case]
    o.steps = o.steps or case["steps"]
    o.node_shots = o.node_shots or o.shots
    gpus, nodes = int_list(o.gpus, "--gpus"), int_list(o.nodes, "--nodes")
    bandwidth, latency = network(o.network)
    if max(gpus + [o.gpus_per_node]) > MAX_GPUS:
        fail("at most %d GPUs on a simulated node (StarPU's STARPU_MAXCUDADEVS)" % MAX_GPUS)
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

    number = r"([0-9.e+-]+)"
    k = concurrency(o, m.group(1), int(m.group(2)))
    lines = plan(o, o.shots, ["--gpus", o.gpus, "--concurrency", k])
    print("# %s reference case, %d steps, %d shots (starwave plan gradient, the calibration in %s); K = %s from "
          "%s s measured for a gradient of %s shots" % (o.case, o.steps, o.shots, o.calibration, k, m.group(1),
                                                          m.group(2)))
    print("\n".join(lines))
    rows = []
    for line in lines:
        r = re.fullmatch(r"\s*(\d+)\s+%s\s+%s\s+%s %%" % (number, number, number), line)
        if r:
            rows.append(("gpus", int(r.group(1)), float(r.group(2))))
    one = {g: t for _, g, t in rows}.get(1)
    if one is None or len(rows) != len(set(gpus)):
        fail("starwave plan's one-node table is not what this script reads (give --gpus with 1)")

    lines = plan(o, o.node_shots, ["--gpus", str(o.gpus_per_node), "--nodes", o.nodes, "--concurrency", k,
                                   "--gpus-per-node", str(o.gpus_per_node), "--network", o.network])
    node_seconds = {}
    for line in lines:
        r = re.fullmatch(r"\s*(\d+)\s+(\d+)\s+%s\s+%s\s+%s\s*/\s*%s\s*/\s*%s %%\s+%s" % ((number,) * 6), line.rstrip())
        if r:  # the simulated node's time: the row's time less its network milliseconds
            node_seconds[int(r.group(1))] = float(r.group(3)) - float(r.group(8)) * 1e-3
    if sorted(node_seconds) != sorted(set(nodes)):
        fail("starwave plan's nodes table is not what this script reads")
    base = node_seconds[1] if 1 in node_seconds else None
    if base is None:
        fail("--nodes must include 1 (the efficiency is against one node)")
    print("\n%d shots on nodes of %d GPUs; efficiency against one node" % (o.node_shots, o.gpus_per_node))
    print("%-6s %-6s %-11s %-10s %12s %9s %11s %8s" % ("nodes", "GPUs", "layout", "network", "gradient s",
                                                        "speed-up", "efficiency", "net ms"))
    bytes_ = 8.0 * case["cells"]
    for n in nodes:
        for contiguous in (False, True):
            received, depth = reduction_receives(o.node_shots, n, contiguous)
            for f in (0.5, 1.0, 1.5):
                net = received * bytes_ / (bandwidth * f) + depth * latency if n > 1 else 0.0
                t = node_seconds[n] + net
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
