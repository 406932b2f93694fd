"""Read-and-reset against the daemon: one cycle's bins and counters, zeroed in one step; under
a concurrent producer every sample lands in exactly one cycle."""

import threading

import grpc
import numpy as np
import pytest

import histd


def test_cycle_returns_bins_and_counters_and_zeroes_both(client, name):
    h = client.create(name, 6, 9, cap=4, x=(0.0, 9.0), y=(0.0, 6.0))
    rng = np.random.default_rng(41)
    indices = rng.integers(0, 54, 500)
    h.fill(indices)
    h.fill(x=[1.5, -1.0, 20.0], y=[0.5, 0.5, 0.5])
    values, info = h.read_and_reset()
    want = np.minimum(np.bincount(indices, minlength=54), 4).reshape(6, 9)
    want[0, 1] = min(want[0, 1] + 1, 4)
    assert values.dtype == np.uint8 and np.array_equal(values, want)
    assert info.samples_applied == 501 and info.samples_outside == 2
    assert (info.x_underflow, info.x_overflow) == (1, 1)
    assert info.messages_applied == 2 and info.total_count == want.sum()
    assert info.saturated_bins == (want == 4).sum() and info.name == name
    after = h.info()
    assert after.samples_applied == 0 and after.total_count == 0 and not h.values().any()
    cycle = h.read_and_reset()
    assert not cycle.values.any() and cycle.info.samples_applied == 0


def test_cycle_streams_in_chunks(client, name):
    h = client.create(name, 64, 333)
    indices = np.random.default_rng(43).integers(0, 64 * 333, 100_000)
    h.fill(indices)
    cycle = client.read_and_reset(name, max_chunk_bytes=1000)
    assert np.array_equal(cycle.values, np.minimum(np.bincount(indices, minlength=64 * 333), 255).reshape(64, 333))


def test_cycles_under_a_concurrent_producer_lose_and_double_nothing(client, name):
    h = client.create(name, 16, 64)
    rng = np.random.default_rng(47)
    batches = [rng.integers(0, 1024, 5000, dtype=np.uint32) for _ in range(20)]
    done = threading.Event()

    def produce():
        try:
            with client.producer(max_message_bytes=4096) as p:
                for batch in batches:
                    p.fill(name, batch)
        finally:
            done.set()

    thread = threading.Thread(target=produce)
    thread.start()
    total, applied, cycles = np.zeros((16, 64), np.int64), 0, 0
    while not done.is_set() or cycles == 0:
        values, info = h.read_and_reset()
        assert info.samples_applied == values.sum()  # cap 255 never reached per cycle here
        total += values
        applied += info.samples_applied
        cycles += 1
    thread.join()
    values, info = h.read_and_reset()
    total += values
    applied += info.samples_applied
    everything = np.concatenate(batches)
    assert applied == everything.size
    assert np.array_equal(total, np.bincount(everything, minlength=1024).reshape(16, 64))


def test_read_and_reset_of_a_missing_histogram_is_not_found(client, name):
    with pytest.raises(histd.NotFoundError) as e:
        client.read_and_reset(name)
    assert e.value.code == grpc.StatusCode.NOT_FOUND
