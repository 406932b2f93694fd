"""Reading against the daemon: values, regions, rebinning, UHI indexing, projections, CDFs,
quantiles and chunked streams, each compared with numpy on the same bins."""

import grpc
import numpy as np
import pytest

import histd

ROWS, COLS = 37, 101  # no power of two, not a multiple of any rebin factor below


@pytest.fixture(scope="module")
def filled(client):
    h = client.create("query-module", ROWS, COLS, cap=200, x=(-1.0, 1.0), y=(0.0, 37.0))
    rng = np.random.default_rng(17)
    indices = rng.integers(0, ROWS * COLS, 400_000)
    indices[:1000] = 5  # one saturated bin
    h.fill(indices)
    want = np.minimum(np.bincount(indices, minlength=ROWS * COLS), 200).reshape(ROWS, COLS)
    assert np.array_equal(h.values(), want)
    yield h, want.astype(np.uint8)
    h.delete()


def rebinned(v, rf, cf):
    """Sums of rf x cf blocks (partial last blocks), uint32, like the daemon."""
    v = v.astype(np.uint32)
    if v.size == 0:
        return np.zeros((-(-v.shape[0] // rf), -(-v.shape[1] // cf)), np.uint32)
    v = np.add.reduceat(v, np.arange(0, v.shape[0], rf), axis=0)
    return np.add.reduceat(v, np.arange(0, v.shape[1], cf), axis=1)


@pytest.mark.parametrize("rows, cols", [
    (None, None), (slice(3, 9), slice(10, 99)), (slice(-5, None), slice(None, 7)), (4, None),
    (None, -1), (slice(0, 1), slice(100, 101)), (slice(5, 5), None), (None, slice(9, 2)),
    (slice(-100, 100), slice(50, 1000))])
def test_regions_slice_like_numpy(filled, rows, cols):
    h, want = filled
    got = h.values(rows=rows, cols=cols)
    ref = want[rows if isinstance(rows, slice) else slice(rows, rows + 1 or None) if rows is not None else slice(None),
               cols if isinstance(cols, slice) else slice(cols, cols + 1 or None) if cols is not None else slice(None)]
    assert got.dtype == np.uint8 and np.array_equal(got, ref)


@pytest.mark.parametrize("rebin", [1, 2, (3, 1), (1, 7), (4, 10), (37, 101), (64, 256)])
@pytest.mark.parametrize("region", [(None, None), (slice(1, 36), slice(2, 100))])
def test_rebin_sums_blocks(filled, rebin, region):
    h, want = filled
    rf, cf = (rebin, rebin) if isinstance(rebin, int) else rebin
    got = h.values(rows=region[0], cols=region[1], rebin=rebin)
    ref = rebinned(want[region[0] or slice(None), region[1] or slice(None)], rf, cf)
    assert np.array_equal(got, ref)
    assert got.dtype == (np.uint8 if (rf, cf) == (1, 1) else np.uint32)


def test_transpose(filled):
    h, want = filled
    assert np.array_equal(h.values(transpose=True), want.T)
    assert np.array_equal(h.values(rows=slice(2, 5), rebin=(2, 3), transpose=True),
                          rebinned(want[2:5], 2, 3).T)


def test_empty_regions_are_empty_arrays(filled):
    h, _ = filled
    assert h.values(rows=slice(3, 3)).shape == (0, COLS)
    assert h.values(rows=slice(0, 0), cols=slice(0, 0)).shape == (0, 0)
    assert h.values(cols=slice(4, 4), rebin=2, transpose=True).shape == (0, 19)


def test_bad_region_arguments(filled):
    h, _ = filled
    with pytest.raises(IndexError):
        h.values(rows=ROWS)
    with pytest.raises(ValueError, match="rebin="):
        h.values(rows=slice(0, 10, 2))
    with pytest.raises(ValueError):
        h.values(rebin=0)


def test_large_results_stream_in_chunks(daemon, filled):
    h, want = filled
    with histd.Client(daemon.address, query_chunk_bytes=1000) as small:
        assert np.array_equal(small.histogram(h.name).values(), want)
        assert np.array_equal(small.histogram(h.name).values(rebin=(1, 2)), rebinned(want, 1, 2))


def test_uhi_indexing_is_x_first(filled):
    h, want = filled
    s = h[10:20, 3:9]
    assert isinstance(s, histd.Snapshot) and np.array_equal(s.values(), want[3:9, 10:20].T)
    assert h[7, 30] == want[30, 7]
    s = h[::histd.rebin(4), 2:30:histd.rebin(5)]
    assert np.array_equal(s.values(), rebinned(want[2:30], 5, 4).T)
    assert np.array_equal(h[...].values(), want.T) and np.array_equal(h[:].values(), want.T)
    with pytest.raises(TypeError):
        h[3, :]
    with pytest.raises(IndexError):
        h[1, 2, 3]


def test_uhi_locators(filled):
    h, want = filled
    bh = pytest.importorskip("boost_histogram")
    # x: 101 bins over [-1, 1); y: 37 unit bins over [0, 37)
    s = h[histd.loc(0.0):histd.loc(0.5), bh.loc(3.5):bh.loc(9.0)]
    c0, c1 = int(np.floor(1.0 / 2 * 101)), int(np.floor(1.5 / 2 * 101))
    assert np.array_equal(s.values(), want[3:9, c0:c1].T)
    assert np.allclose(s.axes[1].edges, np.arange(3, 10))
    s = h[::bh.rebin(2), 5j:8j]
    assert np.array_equal(s.values(), rebinned(want[5:8], 1, 2).T)
    assert h[histd.loc(-1.0), histd.loc(36.5)] == want[36, 0]
    assert h[histd.loc(-1.0, offset=1), 0] == want[0, 1]


def test_projections_match_numpy(filled):
    h, want = filled
    assert np.array_equal(h.projection("x"), want.sum(axis=0, dtype=np.uint64))
    assert np.array_equal(h.projection("y"), want.sum(axis=1, dtype=np.uint64))
    assert h.projection("x").dtype == np.uint64
    with pytest.raises(ValueError):
        h.projection("rows")


@pytest.mark.parametrize("axis, numpy_axis", [("x", 0), ("y", 1)])
def test_cdf_matches_numpy(filled, axis, numpy_axis):
    h, want = filled
    cdf = h.cdf(axis)
    ref = np.cumsum(want.sum(axis=numpy_axis, dtype=np.uint64))
    assert np.array_equal(cdf.cumulative, ref) and cdf.total == ref[-1]
    assert np.allclose(cdf.fraction, ref / ref[-1])


def reference_quantile(counts, p):
    cum = np.cumsum(counts).astype(np.float64)
    target = p * cum[-1]
    i = int(np.argmax((cum > target) | ((cum == target) & (cum > 0))))
    before = cum[i - 1] if i else 0.0
    return i + min(1.0, max(0.0, (target - before) / (cum[i] - before)))


@pytest.mark.parametrize("axis, numpy_axis, lo, hi", [("x", 0, -1.0, 1.0), ("y", 1, 0.0, 37.0)])
def test_quantiles_match_the_cdf(filled, axis, numpy_axis, lo, hi):
    h, want = filled
    p = [0.0, 0.01, 0.25, 0.5, 0.9, 1.0]
    q = h.quantiles(p, axis)
    counts = want.sum(axis=numpy_axis, dtype=np.uint64)
    ref = [reference_quantile(counts, x) for x in p]
    assert np.allclose(q.bin_positions, ref) and q.total == counts.sum()
    assert np.allclose(q.axis_values, lo + np.array(ref) * (hi - lo) / counts.size)
    assert np.array_equal(q.probabilities, p)
    with pytest.raises(ValueError):
        h.quantiles([1.5])


def test_quantiles_without_axes_and_of_an_empty_histogram(client, name):
    h = client.create(name, 2, 4)
    with pytest.raises(histd.FailedPreconditionError) as e:
        h.quantiles(0.5)
    assert e.value.code == grpc.StatusCode.FAILED_PRECONDITION
    h.fill([1, 2])
    q = h.quantiles(0.5)
    assert q.axis_values is None and q.bin_positions.tolist() == [2.0]
