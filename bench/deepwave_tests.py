#!/usr/bin/env python3
"""bench/deepwave_tests.py — Deepwave 0.0.27's own test suite run against starwave.torch.

    /usr/bin/python3 bench/deepwave_tests.py SRC DW [--born] [--starwave build/python] [-k EXPR]

SRC is a Deepwave source tree at v0.0.27 (github.com/ar4/deepwave, commit dc2f8af: its tests/),
DW where bench/deepwave.sh built it. The script copies tests/test_scalar.py (with --born,
tests/test_scalar_born.py too) and tests/test_utils.py into a temporary folder, changes the
import of `scalar`, `Scalar` (and `scalar_born`, `ScalarBorn`) from `deepwave` to
`starwave.torch` — Deepwave's wavelets, resampling helpers and test helpers stay Deepwave's —,
runs pytest there and prints one line a test: `pass`, `FAIL` with the first line of its error,
or `n/a` with the reason the test does not apply to starwave (below). Tests that exercise
Deepwave's internals and would pass on Deepwave's code alone are not run. Exits 0 when every
applicable test passes.

Three more changes, for torch 1.13 (Debian's): `torch.func` (absent before torch 2) is imported
if it is there, else its names are None (the tests that need it fail and are listed n/a);
`torch._dynamo`'s setting is made only where torch has it. A test's `python_backend=True` half
runs on starwave too: starwave.torch accepts the option and runs its own engine either way.

Needs pytest and scipy (python3-pytest, python3-scipy: Deepwave's test helpers import scipy).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))

# Tests that do not apply, by test id (a regular expression matched from the id's start), with the
# reason a user is given. docs/python.md lists the same.
NOT_APPLICABLE = [
    (r"test_scalar\.py::test_(direct|wavefield_decays|gradcheck_2nd_order|reciprocity|storage)\[nx0-dx0",
     "a 1-D model: starwave models 2-D and 3-D"),
    (r"test_scalar\.py::test_negative_vel", "negative velocities: starwave's velocities are positive"),
    (r"test_scalar\.py::test_gradcheck_negative", "negative velocities: starwave's velocities are positive"),
    (r"test_scalar\.py::test_gradcheck_zero", "a zero velocity everywhere: starwave's velocities are positive"),
    (r"test_scalar\.py::test_(vmap_v|jvp_v|hessian_v|vmap_grad_v|vmap_error_check)",
     "torch.func transforms (vmap, jvp, Hessians): absent from torch 1.13, and starwave's call is not "
     "a torch.func-transformable function"),
]
# Tests of Deepwave's own internals: they would pass on Deepwave's code whatever starwave does.
NOT_RUN = [
    ("test_scalar.py::test_scalarfunc", "calls deepwave.scalar.scalar_func, Deepwave's internal function"),
]

IMPORTS = {
    "from deepwave import IGNORE_LOCATION, Scalar, scalar\n":
        "from starwave.torch import IGNORE_LOCATION, Scalar, scalar\n",
    "from deepwave import IGNORE_LOCATION, ScalarBorn, scalar_born\n":
        "from starwave.torch import IGNORE_LOCATION, ScalarBorn, scalar_born\n",
    "from torch.func import jvp, vmap\n":
        "try:\n    from torch.func import jvp, vmap\nexcept ImportError:  # torch < 2\n    jvp = vmap = None\n",
    "torch._dynamo.config.cache_size_limit = 256  # noqa: SLF001\n":
        "if hasattr(torch, '_dynamo'):\n    torch._dynamo.config.cache_size_limit = 256  # noqa: SLF001\n",
}


def prepare(src, work, files):
    for name in files + ["test_utils.py"]:
        path = os.path.join(src, "tests", name)
        if not os.path.isfile(path):
            sys.exit("bench/deepwave_tests.py: %s is missing (SRC must be a Deepwave v0.0.27 tree)" % path)
        text = open(path).read()
        if name != "test_utils.py":
            swapped = False
            for old, new in IMPORTS.items():
                if old in text:
                    text = text.replace(old, new)
                    swapped = swapped or "starwave.torch" in new
            if not swapped:
                sys.exit("bench/deepwave_tests.py: %s imports Deepwave's call in an unexpected way (not v0.0.27?)"
                         % path)
        open(os.path.join(work, name), "w").write(text)


def results(xml):
    """{test id: (outcome, message)} from pytest's JUnit XML."""
    out = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = "%s.py::%s" % (case.get("classname").split(".")[-1], case.get("name"))
        outcome, message = "pass", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "FAIL", "error": "FAIL", "skipped": "skip"}[tag]
                message = (node.get("message") or "").strip().splitlines()
                message = message[0] if message else ""
                break
        out[name] = (outcome, message)
    return out


def reason_for(test, table):
    for pattern, reason in table:
        if re.match(pattern, test):
            return reason
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", help="Deepwave v0.0.27 source tree (its tests/)")
    parser.add_argument("dw", help="where bench/deepwave.sh built Deepwave")
    parser.add_argument("--born", action="store_true", help="test_scalar_born.py too")
    parser.add_argument("--starwave", default=os.path.join(HERE, "..", "build", "python"),
                        help="the folder holding the starwave package (default: build/python)")
    parser.add_argument("-k", dest="select", help="pytest's -k: run the tests it selects")
    args = parser.parse_args()
    files = ["test_scalar.py"] + (["test_scalar_born.py"] if args.born else [])
    with tempfile.TemporaryDirectory(prefix="starwave-deepwave-tests-") as work:
        prepare(args.src, work, files)
        xml = os.path.join(work, "results.xml")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.abspath(args.starwave), os.path.abspath(args.dw)]),
                   STARPU_SILENT="1")
        env.setdefault("STARPU_HOME", os.path.join(work, "starpu"))
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", xml, "-W",
                   "ignore::UserWarning"] + files
        for test, _ in NOT_RUN:
            if test.split("::")[0] in files:
                command += ["--deselect", test]
        if args.select:
            command += ["-k", args.select]
        subprocess.run(command, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not os.path.exists(xml):
            sys.exit("bench/deepwave_tests.py: pytest wrote no results (is python3-pytest installed?)")
        found = results(xml)
    counts = {"pass": 0, "FAIL": 0, "n/a": 0}
    for test in sorted(found):
        outcome, message = found[test]
        reason = reason_for(test, NOT_APPLICABLE)
        if reason and outcome != "pass":
            outcome, message = "n/a", reason
        counts[outcome if outcome in counts else "FAIL"] += 1
        print("%-4s %s%s" % (outcome, test, "  — " + message if message else ""))
    for test, reason in NOT_RUN:
        if test.split("::")[0] in files:
            print("n/a  %s  — not run: %s" % (test, reason))
            counts["n/a"] += 1
    total = sum(counts.values())
    print("%d tests: %d pass, %d fail, %d do not apply" % (total, counts["pass"], counts["FAIL"], counts["n/a"]))
    return 0 if counts["FAIL"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
