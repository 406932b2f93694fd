"""Batcher and Ledger (the I/O-free half of a producer) without a daemon."""

import grpc
import numpy as np
import pytest

from histd._arrays import TYPE_INDEX, TYPE_XY
from histd._ingest_core import Batcher, Ledger


@pytest.mark.parametrize("max_bytes", [8, 12, 1000, 4096])
@pytest.mark.parametrize("sizes", [[0], [1], [1023], [5, 7, 1000, 3], [2048, 2048, 1]])
def test_batcher_cuts_whole_samples_in_order(max_bytes, sizes):
    b = Batcher(max_bytes)
    data = np.arange(sum(sizes), dtype="<u4")
    out, start = [], 0
    for n in sizes:
        out += [(m.first_sample, m.samples, bytes(m.payload))
                for m in b.add("h", TYPE_INDEX, memoryview(data[start:start + n]).cast("B"))]
        start += n
    out += [(m.first_sample, m.samples, bytes(m.payload)) for m in b.flush()]
    assert b"".join(p for _, _, p in out) == data.tobytes()
    position = 0
    for first, samples, payload in out:
        assert first == position and samples * 4 == len(payload) <= max(4, max_bytes // 4 * 4)
        position += samples
    assert all(len(p) == max_bytes // 4 * 4 for _, _, p in out[:-1])


def test_batcher_keeps_one_partial_message_per_key():
    b = Batcher(64)
    assert list(b.add("a", TYPE_INDEX, memoryview(b"\0" * 8))) == []
    assert list(b.add("a", TYPE_XY, memoryview(b"\0" * 8))) == []
    assert list(b.add("b", TYPE_INDEX, memoryview(b"\0" * 4))) == []
    flushed = sorted((m.histogram, m.sample_type, m.samples) for m in b.flush())
    assert flushed == [("a", TYPE_INDEX, 2), ("a", TYPE_XY, 1), ("b", TYPE_INDEX, 1)]
    with pytest.raises(ValueError):
        list(b.add("a", TYPE_XY, memoryview(b"\0" * 4)))


def test_ledger_matches_acks_in_order_and_keeps_rejections():
    ledger, b = Ledger(), Batcher(8)
    messages = list(b.add("h", TYPE_INDEX, memoryview(b"\0" * 24)))
    sequences = [ledger.start(m) for m in messages]
    assert sequences == [1, 2, 3]
    assert ledger.ack(1, 0, "") == (2, None)
    assert ledger.ack(2, 3, "index 9 out of range") == (2, None)
    problem = ledger.take_problem()
    assert problem.code == grpc.StatusCode.INVALID_ARGUMENT and problem.rejected.first_sample == 2
    assert problem.messages_applied == 1 and problem.unacknowledged == 1
    assert ledger.take_problem() is None  # raised once
    assert ledger.ack(7, 0, "")[1] == "server acknowledged sequence 7 but the oldest message in flight is 3"
    assert ledger.ack(3, 0, "") == (2, None)
    assert ledger.ack(4, 0, "")[1].startswith("server acknowledged sequence 4 with no message")
    s = ledger.summary()
    assert (s.counters.messages_acked, s.counters.messages_rejected, s.unacknowledged) == (2, 1, 0)
    assert s.rejected[0].details == "index 9 out of range"
