"""Filling from numpy against the daemon: every dtype, coordinates, batching and windows,
producers, and every way a message or stream can fail."""

import grpc
import numpy as np
import pytest

import histd
from conftest import SESSION_MAX_MESSAGE_BYTES


def capped_counts(indices, rows, cols, cap=255):
    counts = np.bincount(np.asarray(indices, dtype=np.int64), minlength=rows * cols)
    return np.minimum(counts, cap).reshape(rows, cols)


def float32_histogram2d(xs, ys, cols, rows, x, y, cap=255):
    """np.histogram2d on the float32 values histd receives, capped, rows x cols."""
    xs32 = np.asarray(xs, dtype=np.float32).astype(np.float64)
    ys32 = np.asarray(ys, dtype=np.float32).astype(np.float64)
    inside = (xs32 >= x[0]) & (xs32 < x[1]) & (ys32 >= y[0]) & (ys32 < y[1])
    h, _, _ = np.histogram2d(xs32[inside], ys32[inside], bins=(cols, rows), range=(x, y))
    return np.minimum(h, cap).T


@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", ">u4", "u8", "i1", "i2", "i4", "i8",
                                   "f4", "f8"])
def test_fill_indices_of_every_dtype(client, name, dtype):
    rows, cols = 5, 25  # 125 bins: fits every dtype
    h = client.create(name, rows, cols, cap=9)
    indices = np.random.default_rng(1).integers(0, rows * cols, 3000).astype(dtype)
    assert h.fill(indices) is h
    assert np.array_equal(h.values(), capped_counts(indices, rows, cols, 9))
    assert h.info().samples_applied == 3000


@pytest.mark.parametrize("n, message_bytes, window", [
    (0, 1 << 20, 32), (1, 1 << 20, 32), (1001, 400, 1), (1 << 18, 4096, 3),
    (1 << 20, 1 << 20, 32)])
def test_fill_batches_and_windows(client, name, n, message_bytes, window):
    rows, cols = 64, 100
    h = client.create(name, rows, cols)
    rng = np.random.default_rng(n)
    indices = rng.integers(0, rows * cols, n, dtype=np.uint32)
    h.fill(indices, max_message_bytes=message_bytes, window=window)
    assert np.array_equal(h.values(), capped_counts(indices, rows, cols))
    info = h.info()
    assert info.samples_applied == n
    assert info.messages_applied == max(1, -(-n * 4 // (message_bytes // 4 * 4))) or n == 0


def test_fill_strided_and_2d_inputs(client, name):
    h = client.create(name, 8, 8)
    base = np.random.default_rng(3).integers(0, 64, (100, 6))
    h.fill(base[:, ::2])          # non-contiguous, 2-D: flattened in C order
    h.fill(base[::-1, 1].astype(np.uint32))
    want = capped_counts(np.concatenate([base[:, ::2].ravel(), base[::-1, 1]]), 8, 8)
    assert np.array_equal(h.values(), want)


def test_fill_coordinates_matches_histogram2d(client, name):
    rows, cols, x, y = 40, 60, (-3.0, 3.0), (0.0, 10.0)
    h = client.create(name, rows, cols, x=x, y=y)
    rng = np.random.default_rng(5)
    xs = rng.normal(0, 1.5, 200_000)
    ys = rng.uniform(-1, 11, 200_000)
    h.fill(x=xs, y=ys, max_message_bytes=1 << 16)
    assert np.array_equal(h.values(), float32_histogram2d(xs, ys, cols, rows, x, y))
    counts, xedges, yedges = h.to_numpy()
    assert counts.shape == (cols, rows)
    assert np.allclose(xedges, np.linspace(*x, cols + 1)) and np.allclose(yedges, np.linspace(*y, rows + 1))


def test_fill_xy_pairs_and_integer_coordinates(client, name):
    h = client.create(name, 4, 4, x=(0.0, 4.0), y=(0.0, 4.0))
    pairs = np.array([[0.5, 0.5], [3.5, 0.5], [3.5, 3.9]], dtype=np.float32)
    h.fill(xy=pairs)
    h.fill(x=np.array([1, 2], dtype=np.int16), y=np.array([3, 3], dtype=np.uint64))
    want = np.zeros((4, 4), np.uint8)
    want[0, 0] = want[0, 3] = want[3, 3] = want[3, 1] = want[3, 2] = 1
    assert np.array_equal(h.values(), want)


def test_client_side_checks_send_nothing(client, name):
    h = client.create(name, 2, 3)
    with pytest.raises(ValueError, match=r"indices\[2\] = 6 is outside 0..5"):
        h.fill([0, 1, 6, 7])
    with pytest.raises(ValueError, match=r"indices\[0\]"):
        h.fill(np.array([-1], dtype=np.int8))
    with pytest.raises(TypeError):
        h.fill(x=[1.0])
    with pytest.raises(TypeError):
        h.fill([1], x=[1.0], y=[1.0])
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        h.fill(xy=np.zeros((4, 3)))
    info = h.info()
    assert info.messages_applied == 0 and info.messages_rejected == 0


def test_rejected_message_raises_with_status_and_position(client, name):
    h = client.create(name, 2, 3)
    with client.producer(max_message_bytes=16) as p:   # 4 indices per message
        with pytest.raises(histd.IngestError) as e:
            p.fill(name, np.array([0, 1, 2, 3, 4, 5, 6, 5, 1, 1, 1, 1], dtype=np.uint32))
            p.wait()
    err = e.value
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.details
    assert err.rejected.sequence == 2 and err.rejected.first_sample == 4
    assert err.rejected.samples == 4 and err.rejected.histogram == name
    summary = p.summary()
    assert summary.counters.messages_rejected == 1 and summary.unacknowledged == 0
    assert summary.counters.messages_acked == summary.counters.messages_sent - 1
    assert h.values().sum() == summary.counters.samples_acked


def test_fill_on_a_deleted_histogram_is_not_found(client, name):
    h = client.create(name, 2, 2)
    client.delete(name)
    with pytest.raises(histd.IngestError) as e:
        h.fill([0, 1])
    assert e.value.code == grpc.StatusCode.NOT_FOUND
    assert e.value.messages_applied == 0 and e.value.rejected.histogram == name


def test_oversized_message_is_resource_exhausted_and_the_stream_goes_on(client, name):
    h = client.create(name, 1, 16)
    big = np.zeros(SESSION_MAX_MESSAGE_BYTES // 4 + 16, dtype=np.uint32)
    with client.producer(max_message_bytes=2 * SESSION_MAX_MESSAGE_BYTES) as p:
        with pytest.raises(histd.IngestError) as e:
            p.fill(name, big)
            p.wait()
        assert e.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        p.fill(name, np.array([3, 3], dtype=np.uint32))
    assert p.summary().counters.messages_acked == 1
    assert h.values()[0, 3] == 2 and h.values().sum() == 2


def test_producer_streams_to_many_histograms(client, name):
    a = client.create(name + "a", 4, 4)
    b = client.create(name + "b", 2, 2, x=(0.0, 1.0), y=(0.0, 1.0))
    rng = np.random.default_rng(11)
    ia = rng.integers(0, 16, 50_000)
    with client.producer(max_message_bytes=1024, window=4) as p:
        for chunk in np.array_split(ia, 7):
            p.fill(a.name, chunk)
            p.fill(b.name, x=[0.25], y=[0.75])
        p.wait()
        assert p.counters.messages_in_flight == 0
    summary = p.summary()
    assert summary.counters.samples_acked == 50_007 and not summary.rejected
    assert np.array_equal(a.values(), capped_counts(ia, 4, 4))
    assert np.array_equal(b.values(), [[0, 0], [7, 0]])


def test_producer_raises_a_rejection_once_and_keeps_going(client, name):
    h = client.create(name, 1, 4)
    with client.producer() as p:
        p.fill(name + "-missing", [1])
        with pytest.raises(histd.IngestError) as e:
            p.wait()
        assert e.value.code == grpc.StatusCode.NOT_FOUND
        p.fill(name, [1, 2])
    assert p.summary().counters.messages_acked == 1 and len(p.summary().rejected) == 1
    assert h.values().sum() == 2


def test_rejection_at_close_raises_from_the_with_block(client, name):
    with pytest.raises(histd.IngestError) as e:
        with client.producer() as p:
            p.fill(name + "-missing", [1])
    assert e.value.code == grpc.StatusCode.NOT_FOUND and e.value.messages_rejected == 1


def test_progress_bar_counts_samples(client, name, capsys):
    pytest.importorskip("tqdm")
    h = client.create(name, 1, 8)
    h.fill(np.zeros(5000, dtype=np.uint32), progress=True, max_message_bytes=4096)
    err = capsys.readouterr().err
    assert "histd ingest" in err and "5.00k/5.00k" in err


def test_shutdown_notice_is_unavailable(start_daemon, name):
    d = start_daemon("--shutdown_grace=5s")
    with histd.Client(d.address, timeout=30) as c:
        c.create(name, 1, 4)
        p = c.producer()
        p.fill(name, [0, 1])
        p.wait()
        d.terminate()
        with pytest.raises(histd.UnavailableError):
            for _ in range(10_000):
                p.fill(name, np.zeros(1 << 16, dtype=np.uint32))
        with pytest.raises(histd.HistdError) as e:
            p.close()
        assert e.value.code == grpc.StatusCode.UNAVAILABLE
        assert p.summary().unacknowledged == 0
    assert d.stop() == 0
