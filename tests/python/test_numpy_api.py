"""The numpy API (`import starwave`) against the command line's files, physics and bad input.

Run by ctest (test_python) with PYTHONPATH=build/python and STARWAVE_BIN=build/bin/starwave.
"""
import os
import subprocess
import threading
import time

import h5py
import numpy as np
import pytest

import starwave

BIN = os.environ.get("STARWAVE_BIN", "build/bin/starwave")


def cli(*args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A layered model, a 3-shot survey with off-grid positions and ragged receivers, its data."""
    d = tmp_path_factory.mktemp("cli")
    vp, survey, data = str(d / "vp.h5"), str(d / "s.h5"), str(d / "d.h5")
    cli("synth", "--kind", "layered", "--nz", "40", "--nx", "70", "--spacing", "10", "--out", vp)
    with h5py.File(vp, "r") as f:
        v = f["/vp"][...]  # float32: the command line's precision, single
        spacing = f["/vp"].attrs["spacing"]
    nt, dt = 300, 0.0015
    t = np.arange(nt) * dt
    arg = (np.pi * 15 * (t - 0.08)) ** 2
    wavelet = ((1 - 2 * arg) * np.exp(-arg)).astype(np.float32)
    sources = np.array([[15.0, 100.0], [22.5, 333.3], [15.0, 600.0]])
    receivers = np.stack([np.full(50, 12.5), np.linspace(20, 670, 50)], axis=1)
    with h5py.File(survey, "w") as f:
        f.attrs["dt"] = dt
        f.attrs["nt"] = np.int64(nt)
        f["/source/position"] = sources
        f["/source/wavelet"] = wavelet
        f["/receiver/position"] = receivers
        f["/receiver/count"] = np.array([50, 40, 45], dtype=np.int64)
    cli("model", "--model", vp, "--survey", survey, "--out", data)
    with h5py.File(data, "r") as f:
        observed = f["/data"][...]
    return dict(dir=d, vp=vp, survey=survey, data=data, v=v, spacing=spacing, dt=dt, wavelet=wavelet,
                sources=sources, receivers=receivers, counts=np.array([50, 40, 45]), observed=observed)


def call(f, fn, v=None, **kw):
    args = [f["v"] if v is None else v, f["spacing"], f["dt"], f["wavelet"], f["sources"], f["receivers"]]
    if fn is not starwave.model:
        args.append(kw.pop("observed", f["observed"]))
    return fn(*args, receiver_counts=f["counts"], **kw)


def model_file(f, name, v):
    """v written as a model file of the fixture's spacing; its path."""
    path = str(f["dir"] / name)
    with h5py.File(path, "w") as g:
        g["/vp"] = v
        g["/vp"].attrs["spacing"] = f["spacing"]
    return path


def test_model_is_the_cli_bits(files):
    d = call(files, starwave.model)
    assert d.dtype == np.float32 and d.shape == files["observed"].shape
    assert np.array_equal(d, files["observed"])
    assert np.all(d[1, 40:] == 0) and np.abs(d[1, :40]).max() > 0  # ragged: padding traces are zero


def test_pml_frequency_is_the_command_lines(files):
    """The layers tuned to 4 Hz instead of the wavelet's 15: other data (the edges' reflections),
    the bits of `starwave model --pml-frequency 4`."""
    out = str(files["dir"] / "d4.h5")
    cli("model", "--model", files["vp"], "--survey", files["survey"], "--out", out, "--pml-frequency", "4")
    with h5py.File(out, "r") as f:
        expected = f["/data"][...]
    d = call(files, starwave.model, pml_frequency=4.0)
    assert np.array_equal(d, expected) and not np.array_equal(d, files["observed"])


def test_gradient_and_rtm_are_the_cli_bits(files):
    smooth = str(files["dir"] / "smooth.h5")
    with h5py.File(files["vp"], "r") as f, h5py.File(smooth, "w") as g:
        g["/vp"] = f["/vp"][...] * 0.95
        g["/vp"].attrs["spacing"] = f["/vp"].attrs["spacing"]
    out = str(files["dir"] / "g.h5")
    cli("gradient", "--model", smooth, "--data", files["data"], "--out", out, "--overwrite")
    with h5py.File(smooth, "r") as f:
        v = f["/vp"][...]
    assert v.dtype == np.float32
    misfit, g = call(files, starwave.gradient, v)
    with h5py.File(out, "r") as f:
        assert misfit == f.attrs["misfit"]
        assert np.array_equal(g.astype(np.float32), f["/gradient"][...])
    assert g.shape == v.shape and g.dtype == np.float64 and np.abs(g).max() > 0
    image_file = str(files["dir"] / "i.h5")
    cli("rtm", "--model", smooth, "--data", files["data"], "--out", image_file, "--overwrite")
    image = call(files, starwave.rtm, v)
    with h5py.File(image_file, "r") as f:
        assert np.array_equal(image.astype(np.float32), f["/image"][...])


def test_each_misfit_is_the_cli_bits(files):
    """misfit='correlation' and 'envelope' against `starwave gradient --misfit`: the same bits, a
    misfit and gradient of their own (not the L2's); an unknown name is refused."""
    v = files["v"] * np.float32(0.97)
    smooth = model_file(files, "slow.h5", v)
    l2, g2 = call(files, starwave.gradient, v)
    for name in ("correlation", "envelope"):
        out = str(files["dir"] / ("g_" + name + ".h5"))
        cli("gradient", "--model", smooth, "--data", files["data"], "--out", out, "--misfit", name, "--overwrite")
        misfit, g = call(files, starwave.gradient, v, misfit=name)
        with h5py.File(out, "r") as f:
            assert misfit == f.attrs["misfit"] and misfit != l2
            assert np.array_equal(g.astype(np.float32), f["/gradient"][...])
        assert np.abs(g).max() > 0 and not np.allclose(g / np.abs(g).max(), g2 / np.abs(g2).max())
    with pytest.raises(ValueError, match="--misfit: 'l1' is not one of"):
        call(files, starwave.gradient, v, misfit="l1")


def test_window_is_the_cli_bits(files):
    """window= against `starwave gradient --window` (arrivals picked, and at a velocity): the same
    bits, a misfit and gradient of their own; a text or a tuple; bad windows refused."""
    v = files["v"] * np.float32(0.97)
    smooth = model_file(files, "slow_w.h5", v)
    whole, _ = call(files, starwave.gradient, v)
    for extra, kw in ((["--window", "0.02,0.12"], dict(window="0.02,0.12")),
                      (["--window", "0.0123456789012345,0.12,0.03", "--window-velocity", "2000"],
                       dict(window=np.array([0.0123456789012345, 0.12, 0.03]), window_velocity=2000))):
        out = str(files["dir"] / "g_window.h5")
        cli("gradient", "--model", smooth, "--data", files["data"], "--out", out, "--overwrite", *extra)
        misfit, g = call(files, starwave.gradient, v, **kw)
        with h5py.File(out, "r") as f:
            assert misfit == f.attrs["misfit"]
            assert np.array_equal(g.astype(np.float32), f["/gradient"][...])
        assert 0 < misfit < whole and np.abs(g).max() > 0
    for bad in ("0.1", (0.1,), (0.01, 0.1, 0.02, 0.03), ("a", 0.1), (True, 0.1), (np.True_, 0.1), ((0.01,), 0.1),
                (0.01, np.nan), b"0.01,0.1", (), np.array(0.1), "0.01\x00junk,0.1", "\udc80",
                np.broadcast_to(0.1, (10**10,))):  # the last: refused by its length, nothing listed
        with pytest.raises(ValueError, match="--window:"):
            call(files, starwave.gradient, v, window=bad)

    class Shrinks:  # a list an item's __float__ changes: read from a snapshot, never walked
        def __float__(self):
            changing.clear()
            changing.extend([0.0] * 999)
            return 0.02

    changing = [Shrinks(), 0.12]
    assert call(files, starwave.gradient, v, window=changing)[0] == call(files, starwave.gradient, v, window="0.02,0.12")[0]
    for bad in ("2000", True, np.True_, -1.0, np.inf):
        with pytest.raises(ValueError, match="--window-velocity:"):
            call(files, starwave.gradient, v, window="0.02,0.12", window_velocity=bad)
    with pytest.raises(ValueError, match="--window-velocity:"):
        call(files, starwave.gradient, v, window_velocity=2000.0)


def test_precision_follows_the_dtype_and_any_layout_is_taken(files):
    d64 = call(files, starwave.model, files["v"].astype(np.float64))
    d32 = call(files, starwave.model, files["v"].astype(np.float32))
    assert np.array_equal(d32, files["observed"])  # the CLI's default: single precision
    assert not np.array_equal(d64, d32)
    assert np.abs(d64 - d32).max() < 1e-4 * np.abs(d64).max()
    fortran = np.asfortranarray(files["v"])
    strided = np.repeat(files["v"], 2, axis=1)[:, ::2]
    for v in (fortran, strided):
        assert np.array_equal(call(files, starwave.model, v.astype(np.float32)), d32)


def test_reciprocity_off_the_grid(files):
    """A source at a and a receiver at b record the same trace as a source at b and a receiver at a
    (the same wavelet, constant density), off the grid nodes too."""
    v = np.full((50, 60), 2000.0)
    a, b = np.array([[101.3, 152.7]]), np.array([[233.1, 401.9]])
    w = files["wavelet"]
    ab = starwave.model(v, 10.0, files["dt"], w, a, b)
    ba = starwave.model(v, 10.0, files["dt"], w, b, a)
    assert np.abs(ab).max() > 0
    assert np.abs(ab - ba).max() < 1e-5 * np.abs(ab).max()


def test_taylor_and_shot_sums_in_double(files):
    """Φ(v + h δv) − Φ(v) − h ⟨g, δv⟩ falls as h² for a perturbation that reaches every edge (a
    uniform shift plus a ramp), and the gradient of three shots is the sum of each shot's."""
    v = files["v"].astype(np.float64) * 0.97
    misfit, g = call(files, starwave.gradient, v)
    dv = 20.0 + 10.0 * np.linspace(0, 1, v.shape[1])[None, :] * np.ones_like(v)
    remainders = []
    for h in (0.4, 0.2, 0.1):
        m_h, _ = call(files, starwave.gradient, v + h * dv)
        remainders.append(abs(m_h - misfit - h * np.sum(g * dv)))
    slopes = np.log2(np.array(remainders[:-1]) / np.array(remainders[1:]))
    assert np.all(slopes > 1.8), (remainders, slopes)
    total = np.zeros_like(v)
    total_misfit = 0.0
    for s in range(3):
        m_s, g_s = starwave.gradient(v, files["spacing"], files["dt"], files["wavelet"], files["sources"][s:s + 1],
                                     files["receivers"], files["observed"][s:s + 1],
                                     receiver_counts=files["counts"][s:s + 1])
        total += g_s
        total_misfit += m_s
    assert abs(total_misfit - misfit) <= 1e-12 * misfit
    assert np.abs(total - g).max() <= 1e-10 * np.abs(g).max()


def test_three_d(files):
    v = np.full((20, 16, 18), 1800.0, dtype=np.float32)
    v[12:] = 2400.0
    sources = np.array([[30.0, 75.0, 85.0]])
    receivers = np.array([[20.0, 75.0, x] for x in np.linspace(10, 160, 8)])
    d = starwave.model(v, 10.0, 0.002, files["wavelet"][:150], sources, receivers, order=4)
    assert d.shape == (1, 8, 150) and np.abs(d).max() > 0
    misfit, g = starwave.gradient(v * 0.98, 10.0, 0.002, files["wavelet"][:150], sources, receivers, d, order=4)
    assert misfit > 0 and g.shape == v.shape and np.abs(g).max() > 0


def test_the_gil_is_released(files):
    """Another Python thread keeps running while a call works."""
    ticks, done = [0], threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    before = ticks[0]
    call(files, starwave.gradient, files["v"] * 0.97)
    during = ticks[0] - before
    done.set()
    t.join()
    assert during > 10


@pytest.mark.parametrize("change, message", [
    (dict(v=np.zeros((40, 70), dtype=np.float16)), "vp: dtype float16 is not supported"),
    (dict(v=np.full((40, 70), np.nan)), "vp"),
    (dict(v=np.ones(40)), "vp: a (nz, nx) or (nz, ny, nx) array, not of shape (40,)"),
    (dict(v="fast"), "vp"),
    (dict(spacing=(10, 10, 10)), "spacing: one number or 2"),
    (dict(spacing=-1.0), "spacing"),
    (dict(dt=0.0), "dt: must be a positive number"),
    (dict(wavelet=np.ones((2, 300))), "wavelet: an (nt,) or (nshots, nt) = (3, nt)"),
    (dict(sources=np.ones((3, 3))), "sources: an (nshots, 2) array"),
    (dict(sources=np.array([[15.0, 100.0], [22.5, 333.3], [15.0, 6000.0]])), "source"),
    (dict(receivers=np.ones(5)), "receivers: an (nrec, 2) or (nshots, nrec, 2)"),
    (dict(observed=np.zeros((3, 50, 299))), "observed: an (nshots, nrec, nt) = (3, 50, 300)"),
    (dict(observed=np.full((3, 50, 300), np.inf)), "observed: NaN or Inf in shot 0"),
    (dict(counts=np.array([50, 60, 1])), "receiver_counts: each a whole number 1"),
    (dict(order=5), "order"),
    (dict(pml_width=-3), "pml_width"),
    (dict(pml_width=[5, 5, 5]), "pml_width: one width, or 4 (each side's"),
    (dict(pml_width=[5, 5, -1, 5]), "pml_width: must be between 0 and 1000 cells (got -1)"),
    (dict(pml_width=[5, 5, 1001, 5]), "pml_width: must be between 0 and 1000 cells (got 1001)"),
    (dict(pml_width=[5, 5, 2.5, 5]), "pml_width: a whole number of cells, or one a side (got 2.5)"),
    (dict(pml_width="5"), "pml_width: a whole number of cells, or one a side"),
    (dict(pml_width=True), "pml_width: a whole number of cells, or one a side (got True)"),
    (dict(pml_width=[5, 5, np.True_, 5]), "pml_width: a whole number of cells, or one a side"),
    (dict(pml_width=np.array(2.5)), "pml_width: a whole number of cells, or one a side"),
    (dict(pml_width=np.array(-3)), "pml_width: must be between 0 and 1000 cells (got -3)"),
    (dict(pml_frequency=-5.0), "pml_frequency: must be positive Hz"),
    (dict(pml_velocity=1e300), "pml_velocity: 1e+300 m/s is outside"),
    (dict(pml_velocity=1e-300), "pml_velocity: 1e-300 m/s is outside"),
    # Arrays that declare more values than memory holds (broadcast views of one number):
    # refused on their declared shape before any copy, naming the argument and the bytes.
    (dict(wavelet=np.broadcast_to(np.float32(1), (10 ** 10,))), "wavelet of shape (10000000000,): needs 149 GiB"),
    (dict(v=np.broadcast_to(np.float32(2000), (100000, 100000))), "vp of shape (100000, 100000): needs 149 GiB"),
    (dict(receivers=np.broadcast_to(12.5, (10 ** 11, 2))), "receivers of shape (100000000000, 2): needs"),
    (dict(observed=np.broadcast_to(np.float32(0), (3, 50, 10 ** 9))), "observed: an (nshots, nrec, nt)"),
])
def test_bad_input_is_one_value_error(files, change, message):
    f = dict(files)
    kw = {}
    for k in ("order", "pml_width", "pml_frequency", "pml_velocity"):
        if k in change:
            kw[k] = change.pop(k)
    f.update(change)
    with pytest.raises(ValueError) as e:
        starwave.gradient(f["v"], f.get("spacing"), f["dt"], f["wavelet"], f["sources"], f["receivers"],
                          f["observed"], receiver_counts=f["counts"], **kw)
    assert message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_a_child_forked_after_a_call_raises_at_once(files):
    """StarPU's threads do not survive fork(): a call in such a child raises at once (it waited for
    ever); a child forked where StarPU is stopped (starwave.shutdown()) starts its own and works."""
    call(files, starwave.model)

    def in_child():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            start = time.monotonic()
            try:
                call(files, starwave.model)
                said = "worked"
            except RuntimeError as e:
                said = "%s|%.1f" % (e, time.monotonic() - start)
            os.write(w, said.encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            said = f.read()
        os.waitpid(pid, 0)
        return said

    said = in_child()
    assert "made by fork() from one where starwave had started StarPU" in said, said
    assert float(said.rsplit("|", 1)[1]) < 5, said
    starwave.shutdown()
    assert in_child() == "worked"
    call(files, starwave.model)  # the parent goes on
