#!/usr/bin/env python3
"""bench/ptx_counts.py — each CUDA propagation kernel's size, without a device.

For one stencil order and precision (default 8, float: the reference cases'), every kernel
that kernels/cuda/propagate.cu instantiates: its PTX instructions (`nvcc -ptx`, the entry's
instruction lines), and its registers, spill bytes and shared memory (`ptxas -v`), for sm_90.
A change to a kernel body shows here before a device measures it (docs/gpu.md); a device's
Nsight Compute gives the executed counts (`--section InstructionStats`).

    python3 bench/ptx_counts.py [BUILD] [--order 8] [--double]

BUILD is a configured build folder (its ninja commands give nvcc's flags; default build).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile


def nvcc_command(build):
    """The build's nvcc command line for kernels/cuda/propagate.cu, as a list."""
    out = subprocess.run(["ninja", "-C", build, "-t", "commands"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if "kernels/cuda/propagate.cu" in line and "nvcc" in line:
            return shlex.split(line)
    sys.exit(f"bench/ptx_counts.py: {build}: no nvcc command for kernels/cuda/propagate.cu (a CUDA build?)")


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def what(pretty):
    """A short name: the launcher's function, its lambda's instance, the body kind."""
    kind = re.search(r"(sweep1d_kernel|sweep_wide_kernel|shots_kernel|shots_wide_kernel|march_kernel)", pretty)
    fn = re.search(r"(issue_forward_step|issue_batch_step|issue_mu|run_shot_steps|issue_rerun|run_adjoint_steps|copy_grid|copy_state|"
                   r"issue_step|run_adjoint)[^(]*\(", pretty)
    # The kernel's body: its chain of lambdas, as c++filt writes them ({lambda(long)#3}), once each.
    chain = []
    for m in re.finditer(r"\{lambda\(([^)]*)\)#(\d+)\}", pretty):
        step = f"({m.group(1)})#{m.group(2)}"
        if step not in chain:
            chain.append(step)
    parts = [kind.group(1) if kind else "?", fn.group(1) if fn else "?"]
    if chain:
        parts.append(" ".join(chain).replace("starwave::cuda::(anonymous namespace)::", "").replace("starwave::", ""))
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--order", type=int, default=8)
    ap.add_argument("--double", action="store_true")
    a = ap.parse_args()
    cmd = nvcc_command(a.build)
    tag = f"ILi{a.order}E{'d' if a.double else 'f'}"
    # Keep the compile flags; one architecture (sm_90), our own outputs.
    flags = []
    skip = False
    for w in cmd[1:]:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF", "-MT", "-c"):
            skip = w != "-c"
            continue
        if w.startswith("--generate-code") or w == "-MD":
            continue
        flags.append(w)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "p.ptx")
        base = [cmd[0], *flags, "-arch=sm_90"]
        subprocess.run([*base, "-ptx", "-o", ptx], check=True, cwd=a.build)
        sizes = {}
        entry = None
        for line in open(ptx):
            m = re.match(r"\s*(?:\.visible\s+)?\.entry\s+([^(\s]+)\(", line)
            if m:
                entry = m.group(1)
                sizes[entry] = 0
                continue
            if entry is None:
                continue
            s = line.strip()
            if s == "}" and line.startswith("}"):
                entry = None
            elif s and not s.startswith((".", "//", "{", "}", "$", "@$")) or s.startswith("@%"):
                sizes[entry] += 1
        res = subprocess.run([*base, "-Xptxas", "-v", "-c", "-o", os.path.join(tmp, "p.o")], capture_output=True,
                             text=True, check=True, cwd=a.build).stderr
    regs = {}
    current = None
    for line in res.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"(\d+) bytes spill stores", line)
        if m and current:
            regs.setdefault(current, {})["spill"] = int(m.group(1))
        m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?$", line)
        if m and current:
            regs.setdefault(current, {})["regs"] = int(m.group(1))
            regs[current]["smem"] = int(m.group(2) or 0)
    names = [n for n in sizes if tag in n and "propagate" in n]
    pretty = demangle(names)
    rows = sorted(((what(p), sizes[n], regs.get(n, {})) for n, p in zip(names, pretty)), key=lambda r: r[0])
    print(f"order {a.order}, {'double' if a.double else 'float'}, sm_90: PTX instructions of each kernel entry")
    print(f"{'kernel, launcher, lambdas':78} {'PTX':>6} {'regs':>5} {'spill B':>8} {'smem B':>7}")
    for name, n, r in rows:
        print(f"{name:78} {n:6d} {r.get('regs', 0):5d} {r.get('spill', 0):8d} {r.get('smem', 0):7d}")


if __name__ == "__main__":
    main()
