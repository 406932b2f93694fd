"""Compute against the daemon: reduce, scan, transpose and matmul with numpy in and out,
each compared with numpy."""

import grpc
import numpy as np
import pytest

import histd

RNG = np.random.default_rng(29)
ARRAYS = {
    "u8": RNG.integers(0, 256, (13, 57)).astype(np.uint8),
    "i16": RNG.integers(-3000, 3000, (9, 4)).astype(np.int16),
    "i32": RNG.integers(-2**31, 2**31 - 1, (5, 7)).astype(np.int32),
    "i64": RNG.integers(-2**40, 2**40, (6, 3)),
    "u32": RNG.integers(0, 2**32 - 1, (4, 9), dtype=np.uint32),
    "u64": RNG.integers(0, 2**40, (3, 3)).astype(np.uint64),
    "f32": RNG.normal(size=(11, 5)).astype(np.float32),
    "f64": RNG.normal(size=(8, 8)),
    "1d": np.arange(17, dtype=np.int32),
    "one": np.array([[7]], dtype=np.uint32),
}
SUM_TYPES = {"u": np.uint64, "i": np.int64, "f": None}


def sum_dtype(a):
    return SUM_TYPES[a.dtype.kind] or a.dtype


def axes_of(keys, axes):
    """(key, axis) pairs, without axis 1 for 1-D arrays."""
    return [(k, a) for k in keys for a in axes if not (ARRAYS[k].ndim == 1 and a == 1)]


@pytest.mark.parametrize("key, axis", axes_of(sorted(ARRAYS), [None, 0, 1, -1]))
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_reduce_matches_numpy(client, key, op, axis):
    a = ARRAYS[key]
    got = client.reduce(a, op=op, axis=axis)
    if op == "sum":
        want = a.sum(axis=axis, dtype=sum_dtype(a))
    else:
        want = getattr(a, op)(axis=axis)
    assert np.shape(got) == np.shape(want)
    if a.dtype.kind == "f" and op == "sum":
        assert np.allclose(got, want, rtol=1e-5)
    else:
        assert np.array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("key, axis", axes_of(["u8", "i32", "i64", "u32", "f64", "1d"],
                                              [None, 0, 1]))
@pytest.mark.parametrize("kind", ["inclusive", "exclusive"])
def test_scan_matches_cumsum(client, key, kind, axis):
    a = ARRAYS[key]
    got = client.scan(a, kind=kind, axis=axis)
    want = np.cumsum(a, axis=axis, dtype=sum_dtype(a))
    if kind == "exclusive":
        want = want - (a.reshape(-1) if axis is None or a.ndim == 1 else a).astype(want.dtype)
    assert got.shape == want.shape
    assert np.allclose(got, want) if a.dtype.kind == "f" else np.array_equal(got, want)


@pytest.mark.parametrize("key", sorted(ARRAYS))
def test_transpose_matches_numpy(client, key):
    a = ARRAYS[key]
    got = client.transpose(a)
    assert np.array_equal(got, a.T) and got.dtype == a.dtype


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (3, 5, 2), (17, 33, 9)])
def test_matmul_matches_numpy_in_float32(client, m, k, n):
    a = RNG.normal(size=(m, k))
    b = RNG.integers(-5, 5, (k, n)).astype(np.int32)
    c = RNG.normal(size=(m, n)).astype(np.float32)
    want = a.astype(np.float32) @ b.astype(np.float32)
    got = client.matmul(a, b)
    assert got.dtype == np.float32 and got.shape == (m, n) and np.allclose(got, want, rtol=1e-4, atol=1e-4)
    got = client.matmul(a, b, c, alpha=0.5, beta=-2.0)
    assert np.allclose(got, 0.5 * want - 2.0 * c, rtol=1e-4, atol=1e-4)


def test_matmul_of_vectors_promotes_like_numpy(client):
    a = np.arange(4, dtype=np.float32)
    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert np.allclose(client.matmul(a, m), a @ m) and client.matmul(a, m).shape == (3,)
    assert np.allclose(client.matmul(m.T, a), m.T @ a) and client.matmul(m.T, a).shape == (3,)
    assert float(client.matmul(a, a)) == a @ a


def test_compute_on_a_resident_histogram(client, name):
    h = client.create(name, 6, 10)
    indices = RNG.integers(0, 60, 2000)
    h.fill(indices)
    v = h.values()
    assert client.reduce(h) == v.sum() and client.reduce(name, op="max", axis=1).tolist() == v.max(axis=1).tolist()
    assert np.array_equal(client.scan(h, axis=0), np.cumsum(v, axis=0, dtype=np.uint64))
    assert np.array_equal(client.transpose(h), v.T)
    assert np.allclose(client.matmul(h, np.ones((10, 2))), v.astype(np.float32) @ np.ones((10, 2)))


def test_compute_errors(client):
    with pytest.raises(histd.InvalidArgumentError) as e:
        client.reduce(np.zeros((0, 3), np.int32), op="min")
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(histd.InvalidArgumentError):
        client.matmul(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(histd.NotFoundError):
        client.reduce("compute-missing")
    with pytest.raises(ValueError):
        client.reduce(np.ones(3), op="mean")
    with pytest.raises(ValueError):
        client.reduce(np.ones((2, 2)), axis=2)
    with pytest.raises(TypeError):
        client.transpose(np.ones(2, dtype=complex))
