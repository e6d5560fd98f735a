"""Ctrl-C stops a long call (pytest): KeyboardInterrupt once the shots under way have finished,
long before the call would have ended, and the next call runs; a starwave call from a signal
handler during a call is refused, not a deadlock. In a child Python, which the test interrupts
with SIGINT as a terminal would."""
import os
import subprocess
import sys

import pytest

CHILD = r"""
import os, signal, sys, threading, time
import numpy as np
import starwave
v = np.full((80, 100), 2000.0, np.float32)
t = np.arange(500) * 0.001
w = (1 - 2 * (np.pi * 15 * (t - 0.08)) ** 2) * np.exp(-(np.pi * 15 * (t - 0.08)) ** 2)
rec = np.stack([np.full(90, 10.0), np.arange(90) * 10.0], 1)
def shots(n):
    return np.stack([np.full(n, 20.0), np.linspace(50, 900, n)], 1)
observed = starwave.model(v, 10.0, 0.001, w, shots(2), rec)
call = {
    "model": lambda n: starwave.model(v, 10.0, 0.001, w, shots(n), rec),
    "gradient": lambda n: starwave.gradient(v * 1.02, 10.0, 0.001, w, shots(n), rec,
                                            np.repeat(observed[:1], n, axis=0)),
}[sys.argv[1]]
start = time.perf_counter()
call(4)
per_shot = (time.perf_counter() - start) / 4
n = min(4000, max(100, int(10 / per_shot)))  # about 10 s of shots, however fast the machine
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.perf_counter()
try:
    call(n)
    print("finished", flush=True)
except KeyboardInterrupt:
    elapsed = time.perf_counter() - start
    print("interrupted after %.2f s; the whole call: about %.1f s" % (elapsed, n * per_shot))
    print("after-the-signal %.1f %d" % ((elapsed - 1.0) / per_shot, n))
call(2)
print("next call ran")
"""


@pytest.mark.parametrize("what", ["model", "gradient"])
def test_ctrl_c_stops_a_long_call(what):
    out = subprocess.run([sys.executable, "-c", CHILD, what], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, STARPU_SILENT="1"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("interrupted after"), out.stdout
    assert lines[-1] == "next call ran"
    # Stopped within the time of a few windows of shots after the signal at 1 s, not the call's
    # n shots (about 10 s of them): the shots not started by then never start.
    shots, n = float(lines[1].split()[1]), int(lines[1].split()[2])
    assert shots < n / 2, out.stdout


HANDLER = r"""
import os, signal, threading, time
import numpy as np
import starwave
v = np.full((60, 80), 2000.0, np.float32)
t = np.arange(400) * 0.001
w = np.exp(-((t - 0.05) / 0.01) ** 2)
rec = np.stack([np.full(70, 10.0), np.arange(70) * 10.0], 1)
def sources(n):
    return np.stack([np.full(n, 20.0), np.linspace(50, 700, n)], 1)
start = time.perf_counter()
starwave.model(v, 10.0, 0.001, w, sources(4), rec)  # StarPU started, a shot's time measured
n = max(300, int(10 / ((time.perf_counter() - start) / 4)))  # a call of about 10 s: the signal lands inside it
src = sources(n)
def handler(*_):
    try:
        starwave.shutdown()
    except RuntimeError as e:
        print("refused:", e, flush=True)
    raise KeyboardInterrupt
signal.signal(signal.SIGUSR1, handler)
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGUSR1)).start()
try:
    starwave.model(v, 10.0, 0.001, w, src, rec)
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_call_from_a_signal_handler_is_refused():
    out = subprocess.run([sys.executable, "-c", HANDLER], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, STARPU_SILENT="1"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "refused: starwave: called from a signal handler during a starwave call on the same thread", "interrupted"
    ], out.stdout
