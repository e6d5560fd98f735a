#!/usr/bin/env python3
"""bench/simulated_machine.py — a StarPU-SimGrid machine of G GPUs made from one GPU's calibration.

  bench/simulated_machine.py CALIBRATION HOST STARPU_HOME GPUS [--throughput K] [--host-bandwidth GBPS]

CALIBRATION is a folder of StarPU 1.3 measurements of one machine with one GPU (its bus/ and
codelets/45/ files, host name HOST: e.g. bench/calibration/h200-2026-11-27, HOST vm). Writes,
under STARPU_HOME/.starpu/sampling (replaced if this script made it, else refused), the bus
and platform files of a machine with GPUS copies of that GPU, each on its own PCIe link with
the measured host <-> GPU bandwidth and latency, and the codelets' models, under the host name
`simulated` (run with STARPU_HOSTNAME=simulated and STARPU_PERF_MODEL_HOMOGENEOUS_CUDA=1, so
that every GPU takes GPU 0's models).

StarPU 1.3.10 simulates one CUDA worker per GPU (one kernel at a time), while a real GPU runs
several shots at once (8 CUDA workers by default). --throughput K divides every CUDA task's
measured time by K: the GPU's throughput with its concurrent shots, as one worker. K is found by
matching the simulated one-GPU run to the measured one (bench/project.py does).

--host-bandwidth is the main memory's bandwidth that all GPUs' transfers share, in GB/s
(default: the GPUs' links together, so that no link but a GPU's own limits it).
"""
import argparse
import os
import re
import shutil
import sys

NODES = 32  # STARPU_MAXNODES of the StarPU build: the bus matrices' size
MAX_GPUS = 16  # its STARPU_MAXCUDADEVS (scripts/setup --simgrid)


def fail(message):
    sys.stderr.write("bench/simulated_machine.py: %s\n" % message)
    sys.exit(2)


def read_matrix(path):
    rows = []
    if not os.path.isfile(path):
        fail("%s: no such file (is the calibration's host name right?)" % path)
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rows.append([float(v) for v in line.split()])
    if len(rows) < 2 or len(rows[0]) < 2:
        fail("%s: not a StarPU bus matrix" % path)
    return rows


def write_matrix(path, value):
    """value(src, dst) for memory nodes 0 (RAM) … GPUS (the GPUs), nan beyond."""
    with open(path, "w") as f:
        f.write("# " + "".join("to %d\t\t" % d for d in range(NODES)) + "\n")
        for s in range(NODES):
            f.write("\t".join("%e" % value(s, d) for d in range(NODES)) + "\n")


def scale_models(src, dst, host, k):
    """Copies every codelet model, dividing the CUDA entries' times by k."""
    os.makedirs(dst, exist_ok=True)
    entry = re.compile(r"^[0-9a-f]{8}\t")
    for name in sorted(os.listdir(src)):
        if not name.endswith("." + host):
            continue
        out, device, expect_type = [], None, False
        with open(os.path.join(src, name)) as f:
            for line in f:
                if line.startswith("# device type"):
                    expect_type = True
                elif expect_type and not line.startswith("#"):
                    device, expect_type = int(line.split()[0]), False
                elif device == 1 and entry.match(line):
                    v = line.split()
                    # hash size flops mean dev sum sum2 n
                    mean, dev, total, total2 = (float(x) for x in v[3:7])
                    v[3:7] = ["%e" % (mean / k), "%e" % (dev / k), "%e" % (total / k), "%e" % (total2 / k / k)]
                    line = "\t".join(v) + "\n"
                out.append(line)
        with open(os.path.join(dst, name[: -len(host)] + "simulated"), "w") as f:
            f.writelines(out)


def platform(path, version, gpus, cpus, memsize, up, down, lat_up, lat_down, host_bw):
    """SimGrid's description: CPUs, GPUs each on its own link to RAM, all sharing `Host`."""
    dtd = "simgrid/simgrid.dtd" if version == 4 else "simgrid.dtd"
    sep = "-" if version == 4 else "_"
    lines = [
        "<?xml version='1.0'?>",
        "<!DOCTYPE platform SYSTEM 'http://simgrid.gforge.inria.fr/%s'>" % dtd,
        ' <platform version="%d">' % version,
        ' <config id="General">',
        '   <prop id="network/TCP%sgamma" value="-1"></prop>' % sep,
        '   <prop id="network/latency%sfactor" value="1"></prop>' % sep,
        '   <prop id="network/bandwidth%sfactor" value="1"></prop>' % sep,
        '   <prop id="network/crosstraffic" value="0"></prop>',
        '   <prop id="network/weight%sS" value="0.0"></prop>' % sep,
        " </config>",
        ' <AS  id="AS0"  routing="Full">',
        '   <host id="MAIN" speed="1f"/>',
    ]
    lines += ['   <host id="CPU%d" speed="2000000000f"/>' % c for c in range(cpus)]
    for g in range(gpus):
        lines += [
            '   <host id="CUDA%d" speed="2000000000f">' % g,
            '     <prop id="memsize" value="%d"/>' % memsize,
            '     <prop id="memcpy_peer" value="0"/>',
            "   </host>",
        ]
    lines += ['   <host id="RAM" speed="1f"/>', '   <link id="Host" bandwidth="%fBps" latency="0.000000s"/>' % host_bw]
    for g in range(gpus):
        lines += [
            '   <link id="RAM-CUDA%d" bandwidth="%fBps" latency="%fs"/>' % (g, down, lat_down),
            '   <link id="CUDA%d-RAM" bandwidth="%fBps" latency="%fs"/>' % (g, up, lat_up),
        ]
    for g in range(gpus):
        for src, dst in (("CUDA%d" % g, "RAM"), ("RAM", "CUDA%d" % g)):
            lines += [
                '   <route src="%s" dst="%s" symmetrical="NO">' % (src, dst),
                '    <link_ctn id="%s-%s"/>' % (src, dst),
                '    <link_ctn id="Host"/>',
                "   </route>",
            ]
    lines += [" </AS>", " </platform>", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("calibration")
    a.add_argument("host")
    a.add_argument("starpu_home")
    a.add_argument("gpus", type=int)
    a.add_argument("--throughput", type=float, default=1.0)
    a.add_argument("--host-bandwidth", type=float, default=0.0)
    o = a.parse_args()
    if not 1 <= o.gpus <= MAX_GPUS:
        fail("GPUS must be 1 … %d (StarPU's STARPU_MAXCUDADEVS), not %d" % (MAX_GPUS, o.gpus))
    if not o.throughput > 0:
        fail("--throughput must be > 0")
    bus = os.path.join(o.calibration, "bus")
    codelets = os.path.join(o.calibration, "codelets", "45")
    for p in (bus, codelets):
        if not os.path.isdir(p):
            fail("%s: no such folder (a StarPU calibration has bus/ and codelets/45/)" % p)
    bw = read_matrix(os.path.join(bus, o.host + ".bandwidth"))  # MB/s
    lat = read_matrix(os.path.join(bus, o.host + ".latency"))  # µs
    down, up = bw[0][1], bw[1][0]  # RAM → GPU, GPU → RAM
    lat_down, lat_up = lat[0][1], lat[1][0]
    if not (down > 0 and up > 0):
        fail("%s: no measured RAM <-> GPU 0 bandwidth" % bus)
    with open(os.path.join(bus, o.host + ".platform.v4.xml")) as f:
        text = f.read()
    m = re.search(r'<host id="CUDA0"[^>]*>\s*<prop id="memsize" value="(\d+)"', text)
    memsize = int(m.group(1)) if m else 80 << 30
    cpus = len(re.findall(r'<host id="CPU\d+"', text)) or 1

    out = os.path.join(o.starpu_home, ".starpu", "sampling")
    marker = os.path.join(out, "made-by-simulated_machine")
    if os.path.exists(out) and not os.path.exists(marker):
        fail("%s holds StarPU measurements this script did not make: give an empty STARPU_HOME" % out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "bus"))
    open(marker, "w").close()
    scale_models(codelets, os.path.join(out, "codelets", "45"), o.host, o.throughput)

    def matrix(one_way, gpu_to_gpu):
        def value(s, d):
            if s > o.gpus or d > o.gpus:
                return float("nan")
            if s == d:
                return 0.0
            if s == 0:
                return one_way[0]
            if d == 0:
                return one_way[1]
            return gpu_to_gpu

        return value

    write_matrix(os.path.join(out, "bus", "simulated.bandwidth"), matrix((down, up), 1 / (1 / down + 1 / up)))
    write_matrix(os.path.join(out, "bus", "simulated.latency"), matrix((lat_down, lat_up), lat_down + lat_up))
    with open(os.path.join(out, "bus", "simulated.affinity"), "w") as f:
        f.write("# GPU\tNUMA0\t\n" + "".join("%d\t0\t\n" % g for g in range(o.gpus)))
    with open(os.path.join(out, "bus", "simulated.config"), "w") as f:
        f.write(
            "# Current configuration\n%d # Number of CPUs\n1 # Number of NUMA nodes\n%d # Number of CUDA devices\n"
            "0 # Number of OpenCL devices\n0 # Number of MIC devices\n0 # Number of MPI devices\n" % (cpus, o.gpus)
        )
    host_bw = o.host_bandwidth * 1e9 if o.host_bandwidth > 0 else o.gpus * max(up, down) * 1e6
    for version, name in ((3, "simulated.platform.xml"), (4, "simulated.platform.v4.xml")):
        platform(
            os.path.join(out, "bus", name), version, o.gpus, cpus, memsize, up * 1e6, down * 1e6,
            lat_up * 1e-6, lat_down * 1e-6, host_bw,
        )


if __name__ == "__main__":
    main()
