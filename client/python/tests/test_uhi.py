"""UHI: snapshots are PlottableHistograms (x first), convert to hist / boost-histogram with
the same bins boost-histogram fills from the same float32 data, and plot with mplhep."""

import numpy as np
import pytest

import histd

uhi_plottable = pytest.importorskip("uhi.typing.plottable")
bh = pytest.importorskip("boost_histogram")

ROWS, COLS, X, Y = 24, 40, (-2.0, 2.0), (0.0, 1.0)


@pytest.fixture(scope="module")
def wafer(client):
    h = client.create("uhi-module", ROWS, COLS, x=X, y=Y)
    rng = np.random.default_rng(23)
    xs = rng.normal(0, 0.7, 100_000).astype(np.float32)
    ys = rng.beta(2, 5, 100_000).astype(np.float32)
    h.fill(x=xs, y=ys)
    ref = bh.Histogram(bh.axis.Regular(COLS, *X), bh.axis.Regular(ROWS, *Y),
                       storage=bh.storage.Int64())
    ref.fill(xs.astype(np.float64), ys.astype(np.float64))
    yield h, np.minimum(ref.values(), 255)
    h.delete()


def test_snapshot_is_a_plottable_histogram(wafer):
    h, _ = wafer
    s = h.snapshot()
    assert isinstance(s, uhi_plottable.PlottableHistogram)
    assert s.kind == uhi_plottable.Kind("COUNT") == "COUNT"
    assert s.variances() is None and np.array_equal(s.counts(), s.values())
    x, y = s.axes
    for axis in (x, y):
        assert isinstance(axis, uhi_plottable.PlottableAxisGeneric)
        assert isinstance(axis.traits, uhi_plottable.PlottableTraits)
        assert not axis.traits.circular and not axis.traits.discrete
    assert (len(x), len(y)) == (COLS, ROWS) == s.values().shape
    assert x[0] == (X[0], X[0] + 0.1) and y[-1][1] == Y[1]
    assert list(x)[3] == x[3] and x == h.snapshot().axes[0] and x != y


def test_bins_equal_boost_histogram_filled_with_the_same_data(wafer):
    h, ref = wafer
    s = h.snapshot()
    assert np.array_equal(s.values(), ref)
    counts, xedges, yedges = h.to_numpy()
    assert np.array_equal(counts, ref)
    assert np.allclose(xedges, np.linspace(*X, COLS + 1)) and np.allclose(yedges, np.linspace(*Y, ROWS + 1))


def test_to_boost_and_to_hist(wafer):
    h, ref = wafer
    b = h.to_boost()
    assert isinstance(b, bh.Histogram) and isinstance(b.storage_type(), bh.storage.Int64)
    assert np.array_equal(b.values(), ref) and np.allclose(b.axes[0].edges, np.linspace(*X, COLS + 1))
    hist = pytest.importorskip("hist")
    t = h.to_hist()
    assert isinstance(t, hist.Hist) and t.axes.name == ("x", "y")
    assert np.array_equal(t.values(), ref) and t.sum() == ref.sum()
    assert np.array_equal(t.project("x").values(), h.projection("x"))


def test_rebinned_region_converts_with_variable_edges(wafer):
    h, ref = wafer
    s = h[5:38:histd.rebin(4), 2:24:histd.rebin(5)]   # 33 columns -> 8 full blocks + 1
    b = s.to_boost()
    assert len(b.axes[0]) == 9 and isinstance(b.axes[0], bh.axis.Variable)
    assert isinstance(b.axes[1], bh.axis.Variable) and len(b.axes[1]) == 5
    assert b.axes[0].edges[-1] == pytest.approx(X[0] + 38 * 0.1)
    assert b.values().sum() == ref[5:38, 2:24].sum()
    even = h[0:40:histd.rebin(4), :].to_boost()
    assert isinstance(even.axes[0], bh.axis.Regular) and len(even.axes[0]) == 10


def test_hist_and_boost_accept_a_snapshot(wafer):
    h, ref = wafer
    hist = pytest.importorskip("hist")
    for converted in (hist.Hist(h.snapshot()), bh.Histogram(h.snapshot())):
        assert np.array_equal(converted.values(), ref)
        assert np.allclose(converted.axes[1].edges, np.linspace(*Y, ROWS + 1))


def test_histograms_without_axes_have_bin_number_edges(client, name):
    h = client.create(name, 3, 4)
    h.fill([0, 5, 11])
    s = h.snapshot()
    assert np.array_equal(s.axes[0].edges, np.arange(5)) and s.axes[1].label == "row bin"
    assert np.array_equal(h.to_boost().values(), h.values().T)


def test_mplhep_renders_a_png(wafer, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    mplhep = pytest.importorskip("mplhep")
    import matplotlib.pyplot as plt

    h, _ = wafer
    fig, ax = plt.subplots()
    mplhep.hist2dplot(h.snapshot(), ax=ax)
    out = tmp_path / "wafer.png"
    fig.savefig(out)
    plt.close(fig)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
    xlim = ax.get_xlim()
    assert xlim[0] == pytest.approx(X[0]) and xlim[1] == pytest.approx(X[1])
