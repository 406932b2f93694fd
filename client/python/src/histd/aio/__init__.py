"""histd.aio: the histd client for asyncio (grpc.aio).

    import histd.aio

    async def main():
        async with histd.aio.Client("127.0.0.1:7440") as client:
            h = await client.create("wafer", 256, 8192)
            await h.fill(indices)
            counts = await h.values()
            async with client.producer() as p:
                await p.fill("wafer", more_indices)

The API is histd's (Client, handles, producers) with coroutines in place of blocking calls.
"""

from histd.aio._client import Client
from histd.aio._histogram import AsyncHistogram
from histd.aio._ingest import AsyncProducer

__all__ = ["Client", "AsyncHistogram", "AsyncProducer"]
