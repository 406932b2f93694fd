"""Histogram lifecycle against the daemon: create, handles, list, info, reset, merge, delete,
and errors mapped to exceptions with the server's status."""

import grpc
import numpy as np
import pytest

import histd


def test_create_returns_a_handle_with_the_spec(client, name):
    h = client.create(name, rows=3, cols=5, cap=7, x=(-1.0, 1.0), y=(0.0, 3.0))
    assert (h.name, h.shape, h.cap, h.x, h.y) == (name, (3, 5), 7, (-1.0, 1.0), (0.0, 3.0))
    again = client.histogram(name)
    assert again.shape == (3, 5) and again.cap == 7
    info = h.info()
    assert info.name == name and info.bins == 15 and info.total_count == 0
    assert info.device == "cpu" and info.bytes_used >= 15
    assert name in client and name in [i.name for i in client.list()]


def test_default_cap_and_no_axes(client, name):
    h = client.create(name, 2, 2)
    assert h.cap == 255 and h.x is None and h.y is None


def test_info_counts_every_sample_like_numpy(client, name):
    h = client.create(name, rows=4, cols=8, cap=3, x=(0.0, 8.0), y=(0.0, 4.0))
    rng = np.random.default_rng(7)
    xs = rng.uniform(-2, 10, 5000).astype(np.float32)
    ys = rng.uniform(-1, 5, 5000).astype(np.float32)
    xs[:3], ys[:3] = [-np.inf, np.inf, 1.0], [1.0, 1.0, np.inf]
    h.fill(x=xs, y=ys)
    info = h.info()
    inside = (xs >= 0) & (xs < 8) & (ys >= 0) & (ys < 4)
    assert info.samples_applied == inside.sum()
    assert info.samples_outside == (~inside).sum()
    assert info.x_underflow == (xs < 0).sum() and info.x_overflow == (xs >= 8).sum()
    assert info.y_underflow == (ys < 0).sum() and info.y_overflow == (ys >= 4).sum()
    assert (info.x_nan, info.y_nan) == (0, 0)
    assert info.messages_applied == 1 and info.samples_rejected == 0
    counts, _, _ = np.histogram2d(xs[inside], ys[inside], bins=(8, 4), range=((0, 8), (0, 4)))
    capped = np.minimum(counts, 3)
    assert info.total_count == capped.sum() and info.saturated_bins == (capped == 3).sum()


def test_nan_coordinates_are_outside_every_bin(client, name):
    h = client.create(name, rows=2, cols=2, x=(0.0, 1.0), y=(0.0, 1.0))
    h.fill(x=[np.nan, 0.5, np.nan, 0.5], y=[0.5, np.nan, np.nan, 0.5])
    info = h.info()
    assert info.samples_applied == 1 and info.samples_outside == 3
    assert (info.x_nan, info.y_nan) == (2, 2)
    assert info.x_overflow == info.x_underflow == info.y_overflow == info.y_underflow == 0
    assert h.values().sum() == 1


def test_reset_zeroes_bins_and_counters(client, name):
    h = client.create(name, 2, 3)
    h.fill([0, 1, 1, 5])
    info = h.reset()
    assert info.total_count == 0 and info.samples_applied == 0
    assert not h.values().any()


def test_merge_saturates_at_the_target_cap(client, name):
    a = client.create(name + "a", 2, 2, cap=255)
    b = client.create(name + "b", 2, 2, cap=4)
    a.fill([0] * 3 + [1] * 9 + [3])
    b.fill([0] * 2)
    info = b.merge(a)
    assert np.array_equal(b.values(), [[4, 4], [0, 1]])
    assert info.total_count == 9
    assert client.merge(b.name, a.name).total_count == 3 + 9 + 1 + 4 + 4 + 1


def test_delete(client, name):
    h = client.create(name, 1, 1)
    h.delete()
    assert name not in client
    with pytest.raises(histd.NotFoundError) as e:
        h.values()
    assert e.value.code == grpc.StatusCode.NOT_FOUND and name in e.value.details


def test_stats_has_every_counter(client):
    stats = client.stats()
    assert stats.engine.startswith("cpu") and stats.uptime_seconds > 0
    from histd.v1 import histograms_pb2
    assert {f.name for f in histograms_pb2.ServerStats.DESCRIPTOR.fields} == set(vars(stats))


def test_info_has_every_counter():
    from histd.v1 import histograms_pb2
    proto = {f.name for f in histograms_pb2.HistogramInfo.DESCRIPTOR.fields} - {"spec"}
    spec = {"name", "rows", "cols", "cap", "x", "y"}
    assert proto | spec == set(histd.HistogramInfo.__dataclass_fields__)


@pytest.mark.parametrize("call, exception, code", [
    (lambda c, n: c.info(n + "-missing"), histd.NotFoundError, grpc.StatusCode.NOT_FOUND),
    (lambda c, n: c.histogram(n + "-missing"), KeyError, grpc.StatusCode.NOT_FOUND),
    (lambda c, n: c.delete(n + "-missing"), histd.NotFoundError, grpc.StatusCode.NOT_FOUND),
    (lambda c, n: c.create("bad name!", 1, 1), histd.InvalidArgumentError,
     grpc.StatusCode.INVALID_ARGUMENT),
    (lambda c, n: c.create(n, 1, 1, x=(1.0, 1.0), y=(0.0, 1.0)), ValueError,
     grpc.StatusCode.INVALID_ARGUMENT),
    (lambda c, n: c.create(n, 1 << 16, 1 << 16), histd.ResourceExhaustedError,
     grpc.StatusCode.RESOURCE_EXHAUSTED),
    (lambda c, n: c.write_snapshot(), histd.FailedPreconditionError,
     grpc.StatusCode.FAILED_PRECONDITION),
])
def test_server_errors_map_to_exceptions(client, name, call, exception, code):
    with pytest.raises(exception) as e:
        call(client, name)
    assert isinstance(e.value, histd.HistdError)
    assert e.value.code == code and e.value.details


def test_duplicate_create_is_already_exists(client, name):
    client.create(name, 1, 1)
    with pytest.raises(histd.AlreadyExistsError) as e:
        client.create(name, 1, 1)
    assert e.value.code == grpc.StatusCode.ALREADY_EXISTS


def test_merge_of_different_shapes_is_invalid_argument(client, name):
    client.create(name + "a", 1, 2)
    client.create(name + "b", 2, 1)
    with pytest.raises(histd.InvalidArgumentError):
        client.merge(name + "a", name + "b")


def test_client_side_checks_send_nothing(client, name):
    with pytest.raises(ValueError, match="cap"):
        client.create(name, 1, 1, cap=0)
    with pytest.raises(ValueError, match="rows and cols"):
        client.create(name, 0, 1)
    assert name not in client


def test_unreachable_daemon_is_unavailable():
    with histd.Client("127.0.0.1:1", timeout=5) as c:
        with pytest.raises(histd.UnavailableError) as e:
            c.list()
    assert e.value.code == grpc.StatusCode.UNAVAILABLE
