"""histd.aio against the daemon: the same calls as the blocking client, on an event loop."""

import asyncio

import grpc
import numpy as np
import pytest

import histd
import histd.aio


def run(coroutine_function, daemon, **client_args):
    async def main():
        async with histd.aio.Client(daemon.address, timeout=60, **client_args) as client:
            return await coroutine_function(client)
    return asyncio.run(main())


def test_lifecycle_fill_and_reads(daemon, name):
    rng = np.random.default_rng(31)
    indices = rng.integers(0, 12 * 30, 20_000)
    want = np.minimum(np.bincount(indices, minlength=360), 255).reshape(12, 30)

    async def body(client):
        h = await client.create(name, 12, 30, x=(0.0, 3.0), y=(0.0, 1.2))
        assert (await client.histogram(name)).shape == (12, 30)
        assert await h.fill(indices, max_message_bytes=4096, window=2) is h
        assert np.array_equal(await h.values(), want)
        assert np.array_equal(await h.values(rows=slice(2, 9), rebin=(2, 5)),
                              np.add.reduceat(np.add.reduceat(want[2:9].astype(np.uint32),
                                                              [0, 2, 4, 6], axis=0),
                                              list(range(0, 30, 5)), axis=1))
        s = await h[::histd.rebin(3), 4:8]
        assert s.values().shape == (10, 4)
        assert await h[2, 3] == want[3, 2]
        counts, xedges, _ = await h.to_numpy()
        assert np.array_equal(counts, want.T) and xedges[-1] == 3.0
        assert np.array_equal(await h.projection("y"), want.sum(axis=1))
        assert (await h.cdf("x")).total == want.sum()
        assert (await h.quantiles([0.5])).axis_values is not None
        info = await h.info()
        assert info.samples_applied == 20_000 and name in [i.name for i in await client.list()]
        other = await client.create(name + "b", 12, 30)
        assert (await other.merge(h)).total_count == want.sum()
        values, cycle = await h.read_and_reset()
        assert np.array_equal(values, want) and cycle.samples_applied == 20_000
        assert (await h.info()).total_count == 0
        assert (await h.reset()).total_count == 0
        await other.delete()
        assert (await client.stats()).histograms >= 1
    run(body, daemon)


def test_compute(daemon):
    a = np.arange(24, dtype=np.int16).reshape(4, 6)

    async def body(client):
        assert await client.reduce(a) == a.sum()
        assert np.array_equal(await client.reduce(a, op="max", axis=0), a.max(axis=0))
        assert np.array_equal(await client.scan(a, axis=1), np.cumsum(a, axis=1))
        assert np.array_equal(await client.transpose(a), a.T)
        assert np.allclose(await client.matmul(a, a.T), (a @ a.T).astype(np.float32))
    run(body, daemon)


def test_producer_and_errors(daemon, name):
    async def body(client):
        h = await client.create(name, 2, 4, x=(0.0, 4.0), y=(0.0, 2.0))
        async with client.producer(max_message_bytes=64) as p:
            await p.fill(name, np.arange(8) % 8)
            await p.fill(name, x=[0.5, 3.5], y=[1.5, 1.5])
            await p.wait()
            await p.fill(name, [9])   # beyond 8 bins: the daemon rejects it
            with pytest.raises(histd.IngestError) as e:
                await p.wait()
            assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert isinstance(e.value, histd.InvalidArgumentError)
            await p.fill(name, [0])
        s = p.summary()
        assert s.counters.samples_acked == 11 and s.counters.messages_rejected == 1
        assert (await h.values()).sum() == 11
        with pytest.raises(ValueError):
            await h.fill([8])                 # checked before sending
        with pytest.raises(histd.NotFoundError):
            await client.info(name + "-missing")
        await h.delete()
        with pytest.raises(histd.IngestError) as e:
            await h.fill([0])
        assert e.value.code == grpc.StatusCode.NOT_FOUND
    run(body, daemon)


def test_token_metadata_on_aio_calls(daemon):
    async def body(client):
        assert client._config.metadata == (("authorization", "Bearer abc"),)
        await client.list()   # the daemon ignores it until the security issue lands
    run(body, daemon, token="abc")


def test_render_and_watch(daemon, name):
    async def body(client):
        h = await client.create(name, 20, 40)
        await h.fill(np.repeat(np.arange(800), np.arange(800) % 3))
        png = await h.render(80, 20, bare=True)
        assert png[1:4] == b"PNG"
        views = h.watch((5, 8), interval=0.1)
        first = await views.__anext__()
        bins = (await h.values()).astype(np.uint32)
        want = np.add.reduceat(np.add.reduceat(bins, range(0, 20, 4), axis=0), range(0, 40, 5),
                               axis=1)
        assert first.sequence == 1 and np.array_equal(first.values, want)
        await h.fill([0])
        second = await views.__anext__()
        assert second.sequence == 2 and second.values[0, 0] == want[0, 0] + 1
        await views.aclose()
        await h.delete()
    run(body, daemon)
