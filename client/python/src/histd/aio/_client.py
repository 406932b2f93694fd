"""histd.aio.Client: histd.Client's API on grpc.aio, for services with an event loop.

Contract: the same methods, arguments, results and exceptions as histd.Client (see
histd/_client.py), as coroutines; ``producer()`` returns an AsyncProducer for ``async
with``. Create the client inside the running loop and ``await client.close()`` (or ``async
with``) on it.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, List, Optional, Tuple, Union

import grpc
import numpy as np

from histd import _calls
from histd._channel import DEFAULT_ADDRESS, TLS, ChannelConfig
from histd._client import INGEST_METHOD
from histd._errors import error_from_rpc
from histd._ingest import samples_to_pieces
from histd._types import Cdf, HistogramInfo, Quantiles, Range, ServerStats
from histd._view import ChunkAssembler
from histd.aio._histogram import AsyncHistogram
from histd.aio._ingest import AsyncProducer
from histd.v1 import (compute_pb2_grpc, histograms_pb2, histograms_pb2_grpc,
                      ingest_pb2, query_pb2, query_pb2_grpc)

__all__ = ["Client"]


class Client:
    """An asyncio connection to histd; arguments as histd.Client."""

    def __init__(self, address: str = DEFAULT_ADDRESS, *,
                 tls: Union[None, bool, TLS, grpc.ChannelCredentials] = None,
                 token: Optional[str] = None, timeout: Optional[float] = None,
                 max_message_bytes: int = 64 << 20, wait_for_ready: bool = False,
                 query_chunk_bytes: int = 0) -> None:
        self._config = ChannelConfig(address, tls, token, timeout, max_message_bytes,
                                     wait_for_ready)
        self.address = address
        self.query_chunk_bytes = query_chunk_bytes
        self._channel = self._config.aio_channel()
        self._histograms = histograms_pb2_grpc.HistogramsStub(self._channel)
        self._query = query_pb2_grpc.QueryStub(self._channel)
        self._compute = compute_pb2_grpc.ComputeStub(self._channel)
        self._ingest = self._channel.stream_stream(
            INGEST_METHOD, request_serializer=None,
            response_deserializer=ingest_pb2.IngestResponse.FromString)

    async def _call(self, method: Any, request: Any) -> Any:
        try:
            return await method(request, **self._config.call_kwargs())
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"histd.aio.Client({self.address!r})"

    async def create(self, name: str, rows: int, cols: int, cap: int = 255, *,
                     x: Optional[Range] = None, y: Optional[Range] = None) -> AsyncHistogram:
        request = histograms_pb2.CreateHistogramRequest(
            spec=_calls.spec(name, rows, cols, cap, x, y))
        info = await self._call(self._histograms.CreateHistogram, request)
        return AsyncHistogram(self, HistogramInfo.from_proto(info))

    async def histogram(self, name: str) -> AsyncHistogram:
        return AsyncHistogram(self, await self.info(name))

    async def list(self) -> List[HistogramInfo]:
        response = await self._call(self._histograms.ListHistograms,
                                    histograms_pb2.ListHistogramsRequest())
        return [HistogramInfo.from_proto(h) for h in response.histograms]

    async def info(self, name: str) -> HistogramInfo:
        return HistogramInfo.from_proto(await self._call(
            self._histograms.GetHistogramInfo, histograms_pb2.GetHistogramInfoRequest(name=name)))

    async def delete(self, name: str) -> None:
        await self._call(self._histograms.DeleteHistogram,
                         histograms_pb2.DeleteHistogramRequest(name=name))

    async def reset(self, name: str) -> HistogramInfo:
        return HistogramInfo.from_proto(await self._call(
            self._histograms.ResetHistogram, histograms_pb2.ResetHistogramRequest(name=name)))

    async def merge(self, source: str, target: str) -> HistogramInfo:
        return HistogramInfo.from_proto(await self._call(
            self._histograms.MergeHistogram,
            histograms_pb2.MergeHistogramRequest(source=source, target=target)))

    async def read_and_reset(self, name: str, *, max_chunk_bytes: int = 0) -> _calls.Cycle:
        """As histd.Client.read_and_reset()."""
        request = histograms_pb2.ReadAndResetHistogramRequest(
            name=name, max_chunk_bytes=max_chunk_bytes or self.query_chunk_bytes)
        assembler = _calls.CycleAssembler(name)
        try:
            async for chunk in self._histograms.ReadAndResetHistogram(
                    request, **self._config.call_kwargs()):
                assembler.add(chunk)
        except grpc.RpcError as e:
            raise assembler.failed(error_from_rpc(e)) from None
        return assembler.result()

    async def stats(self) -> ServerStats:
        return ServerStats.from_proto(await self._call(
            self._histograms.GetServerStats, histograms_pb2.GetServerStatsRequest()))

    async def write_snapshot(self) -> Tuple[str, int]:
        r = await self._call(self._histograms.WriteSnapshot,
                             histograms_pb2.WriteSnapshotRequest())
        return r.path, int(r.histograms)

    def producer(self, *, max_message_bytes: int = 1 << 20, window: int = 32,
                 progress: Optional[bool] = None, total: Optional[int] = None) -> AsyncProducer:
        """``async with client.producer() as p: await p.fill("name", indices)``."""
        call = self._ingest(**self._config.call_kwargs(stream=True))
        return AsyncProducer(call, max_message_bytes=max_message_bytes, window=window,
                             progress=progress, total=total)

    async def fill(self, name: str, indices: Any = None, *, x: Any = None, y: Any = None,
                   xy: Any = None, max_message_bytes: int = 1 << 20, window: int = 32,
                   progress: Optional[bool] = None, limit: Optional[int] = None) -> None:
        sample_type, total, pieces = samples_to_pieces(indices, x, y, xy, limit)
        async with self.producer(max_message_bytes=max_message_bytes, window=window,
                                 progress=progress, total=total) as p:
            await p.send_pieces(name, sample_type, pieces)

    async def _run_query(self, plan: _calls.QueryPlan) -> np.ndarray:
        if plan.empty:
            return plan.empty_result()
        assembler = ChunkAssembler()
        try:
            async for chunk in self._query.Query(plan.request, **self._config.call_kwargs()):
                assembler.add(chunk)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        return assembler.result()

    async def _render(self, request: query_pb2.RenderRequest) -> bytes:
        return bytes((await self._call(self._query.Render, request)).png)

    async def _watch(self, request: query_pb2.WatchRequest) -> AsyncIterator[_calls.View]:
        call = self._query.Watch(request, **self._config.call_kwargs(stream=True))
        try:
            async for update in call:
                yield _calls.view_result(update)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        finally:
            call.cancel()

    async def _project(self, name: str, axis: str) -> np.ndarray:
        return _calls.project_result(await self._call(
            self._query.Project, query_pb2.ProjectRequest(name=name, collapse=_calls.dim_of(axis))))

    async def _cdf(self, name: str, axis: str) -> Cdf:
        return _calls.cdf_result(await self._call(
            self._query.Cdf, query_pb2.CdfRequest(name=name, collapse=_calls.dim_of(axis))))

    async def _quantiles(self, name: str, probabilities: Any, axis: str) -> Quantiles:
        request = _calls.quantiles_request(name, probabilities, axis)
        return _calls.quantiles_result(request, await self._call(self._query.Quantiles, request))

    async def reduce(self, a: Any, op: str = "sum", axis: Optional[int] = None) -> Any:
        request, dtype = _calls.reduce_request(a, op, axis)
        return _calls.reduce_result(request, await self._call(self._compute.Reduce, request), dtype)

    async def scan(self, a: Any, kind: str = "inclusive",
                   axis: Optional[int] = None) -> np.ndarray:
        request, ndim = _calls.scan_request(a, kind, axis)
        return _calls.scan_result(request, await self._call(self._compute.Scan, request), ndim)

    async def transpose(self, a: Any) -> np.ndarray:
        request, ndim, dtype = _calls.transpose_request(a)
        response = await self._call(self._compute.Transpose, request)
        return _calls.transpose_result(response, ndim, dtype)

    async def matmul(self, a: Any, b: Any, c: Any = None, *, alpha: float = 1.0,
                     beta: float = 0.0) -> np.ndarray:
        request, ndims = _calls.matmul_request(a, b, c, alpha, beta)
        return _calls.matmul_result(await self._call(self._compute.Matmul, request), ndims)
