"""Client: a blocking client for every histd.v1 RPC, numpy in and out.

Contract: one method per RPC (plus handles from create()/histogram()); each returns the
response as numpy arrays or dataclasses, or raises the server's error as a HistdError
subclass with the same grpc.StatusCode and message. Nothing is retried. Unary calls and
query streams get ``timeout`` seconds (None: no deadline); ingest streams never do.

Thread safety: a Client may be used from many threads at once (gRPC channels and stubs are
thread-safe; each call is independent). Close it (or use ``with``) to release the channel.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple, Union

import grpc
import numpy as np

from histd import _calls
from histd._channel import DEFAULT_ADDRESS, TLS, ChannelConfig
from histd._errors import error_from_rpc
from histd._histogram import Histogram
from histd._ingest import Producer, samples_to_pieces
from histd._types import Cdf, HistogramInfo, Quantiles, Range, ServerStats
from histd.v1 import (compute_pb2_grpc, histograms_pb2, histograms_pb2_grpc, ingest_pb2,
                      query_pb2, query_pb2_grpc)

__all__ = ["Client"]

INGEST_METHOD = "/histd.v1.Ingest/Ingest"


class Client:
    """A connection to histd.

    ``address``: host:port (default 127.0.0.1:7440) or any gRPC target. ``tls``: None
    (plaintext), True (system root certificates), ``histd.TLS(root_certificates=...,
    certificate_chain=..., private_key=...)`` or a grpc.ChannelCredentials. ``token``: sent
    as ``authorization: Bearer <token>`` on every call. ``timeout``: seconds per call.
    ``max_message_bytes``: largest message either way (compute inputs and results are
    single messages). ``query_chunk_bytes``: chunk size asked of Query streams (0: the
    server's default, 1 MiB).
    """

    def __init__(self, address: str = DEFAULT_ADDRESS, *,
                 tls: Union[None, bool, TLS, grpc.ChannelCredentials] = None,
                 token: Optional[str] = None, timeout: Optional[float] = None,
                 max_message_bytes: int = 64 << 20, wait_for_ready: bool = False,
                 query_chunk_bytes: int = 0) -> None:
        self._config = ChannelConfig(address, tls, token, timeout, max_message_bytes,
                                     wait_for_ready)
        self.address = address
        self.query_chunk_bytes = query_chunk_bytes
        self._channel = self._config.sync_channel()
        self._histograms = histograms_pb2_grpc.HistogramsStub(self._channel)
        self._query = query_pb2_grpc.QueryStub(self._channel)
        self._compute = compute_pb2_grpc.ComputeStub(self._channel)
        self._ingest = self._channel.stream_stream(
            INGEST_METHOD, request_serializer=None,
            response_deserializer=ingest_pb2.IngestResponse.FromString)

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, **self._config.call_kwargs())
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def close(self) -> None:
        """Closes the channel; calls in progress are cancelled."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"histd.Client({self.address!r})"

    # -- histograms --------------------------------------------------------------------------

    def create(self, name: str, rows: int, cols: int, cap: int = 255, *,
               x: Optional[Range] = None, y: Optional[Range] = None) -> Histogram:
        """Creates a histogram of rows x cols one-byte bins saturating at ``cap`` (1..255),
        with optional axes ``x=(lo, hi)`` over the columns and ``y=(lo, hi)`` over the rows
        (both needed to fill coordinates); returns its handle. ALREADY_EXISTS /
        INVALID_ARGUMENT / RESOURCE_EXHAUSTED from the server raise."""
        request = histograms_pb2.CreateHistogramRequest(
            spec=_calls.spec(name, rows, cols, cap, x, y))
        return Histogram(self, HistogramInfo.from_proto(
            self._call(self._histograms.CreateHistogram, request)))

    def histogram(self, name: str) -> Histogram:
        """A handle on an existing histogram (NotFoundError when there is none)."""
        return Histogram(self, self.info(name))

    def list(self) -> List[HistogramInfo]:
        """Every histogram's info."""
        response = self._call(self._histograms.ListHistograms,
                              histograms_pb2.ListHistogramsRequest())
        return [HistogramInfo.from_proto(h) for h in response.histograms]

    def __contains__(self, name: str) -> bool:
        return any(h.name == name for h in self.list())

    def info(self, name: str) -> HistogramInfo:
        """One histogram's spec and counters."""
        return HistogramInfo.from_proto(self._call(
            self._histograms.GetHistogramInfo, histograms_pb2.GetHistogramInfoRequest(name=name)))

    def delete(self, name: str) -> None:
        self._call(self._histograms.DeleteHistogram,
                   histograms_pb2.DeleteHistogramRequest(name=name))

    def reset(self, name: str) -> HistogramInfo:
        """Zeroes every bin and counter of ``name``; returns its info after."""
        return HistogramInfo.from_proto(self._call(
            self._histograms.ResetHistogram, histograms_pb2.ResetHistogramRequest(name=name)))

    def merge(self, source: str, target: str) -> HistogramInfo:
        """Adds every bin of ``source`` into ``target`` (same shape, saturating at target's
        cap); returns target's info after."""
        return HistogramInfo.from_proto(self._call(
            self._histograms.MergeHistogram,
            histograms_pb2.MergeHistogramRequest(source=source, target=target)))

    def read_and_reset(self, name: str, *, max_chunk_bytes: int = 0) -> _calls.Cycle:
        """Returns every bin and counter of ``name`` and zeroes both, atomically with respect
        to ingest: each applied sample is in exactly one cycle, and the cycle's info counts
        exactly the samples in its bins (see ReadAndResetHistogram in histograms.proto).
        Returns ``Cycle(values, info)``. If the stream breaks after its first chunk the
        histogram was reset anyway; the error says that this cycle's bins are lost."""
        request = histograms_pb2.ReadAndResetHistogramRequest(
            name=name, max_chunk_bytes=max_chunk_bytes or self.query_chunk_bytes)
        assembler = _calls.CycleAssembler(name)
        try:
            for chunk in self._histograms.ReadAndResetHistogram(request,
                                                                **self._config.call_kwargs()):
                assembler.add(chunk)
        except grpc.RpcError as e:
            raise assembler.failed(error_from_rpc(e)) from None
        return assembler.result()

    def stats(self) -> ServerStats:
        """The daemon's statistics."""
        return ServerStats.from_proto(self._call(self._histograms.GetServerStats,
                                                 histograms_pb2.GetServerStatsRequest()))

    def write_snapshot(self) -> Tuple[str, int]:
        """Saves every histogram to the daemon's --snapshot_path; returns (path, histograms).
        FailedPreconditionError when the daemon has no snapshot path."""
        r = self._call(self._histograms.WriteSnapshot, histograms_pb2.WriteSnapshotRequest())
        return r.path, int(r.histograms)

    # -- ingest ------------------------------------------------------------------------------

    def producer(self, *, max_message_bytes: int = 1 << 20, window: int = 32,
                 progress: Optional[bool] = None, total: Optional[int] = None) -> Producer:
        """Opens a long-lived ingest stream for any histograms: ``with client.producer() as
        p: p.fill("name", indices)``. See histd.Producer for its contract."""
        def open_stream(requests: Iterator[bytes]) -> Any:
            return self._ingest(requests, **self._config.call_kwargs(stream=True))
        return Producer(open_stream, max_message_bytes=max_message_bytes, window=window,
                        progress=progress, total=total)

    def fill(self, name: str, indices: Any = None, *, x: Any = None, y: Any = None,
             xy: Any = None, max_message_bytes: int = 1 << 20, window: int = 32,
             progress: Optional[bool] = None, limit: Optional[int] = None) -> None:
        """Histogram.fill() by name, on a stream of its own; ``limit``: the bin count, when
        known, for the client-side index check."""
        sample_type, total, pieces = samples_to_pieces(indices, x, y, xy, limit)
        with self.producer(max_message_bytes=max_message_bytes, window=window,
                           progress=progress, total=total) as p:
            p.send_pieces(name, sample_type, pieces)

    # -- queries -----------------------------------------------------------------------------

    def _run_query(self, plan: _calls.QueryPlan) -> np.ndarray:
        if plan.empty:
            return plan.empty_result()
        from histd._view import assemble_chunks
        try:
            return assemble_chunks(self._query.Query(plan.request, **self._config.call_kwargs()))
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None

    def _render(self, request: query_pb2.RenderRequest) -> bytes:
        return bytes(self._call(self._query.Render, request).png)

    def _watch(self, request: query_pb2.WatchRequest) -> Iterator[_calls.View]:
        call = self._query.Watch(request, **self._config.call_kwargs(stream=True))
        try:
            for update in call:
                yield _calls.view_result(update)
        except grpc.RpcError as e:
            raise error_from_rpc(e) from None
        finally:
            call.cancel()

    def _project(self, name: str, axis: str) -> np.ndarray:
        return _calls.project_result(self._call(
            self._query.Project, query_pb2.ProjectRequest(name=name, collapse=_calls.dim_of(axis))))

    def _cdf(self, name: str, axis: str) -> Cdf:
        return _calls.cdf_result(self._call(
            self._query.Cdf, query_pb2.CdfRequest(name=name, collapse=_calls.dim_of(axis))))

    def _quantiles(self, name: str, probabilities: Any, axis: str) -> Quantiles:
        request = _calls.quantiles_request(name, probabilities, axis)
        return _calls.quantiles_result(request, self._call(self._query.Quantiles, request))

    # -- compute -----------------------------------------------------------------------------

    def reduce(self, a: Any, op: str = "sum", axis: Optional[int] = None) -> Any:
        """``op`` ("sum", "min", "max") over a numpy array or a histogram (handle or name), on
        the daemon's engine: axis None gives a numpy scalar, 0 one value per column, 1 one per
        row (numpy's rules). SUM of unsigned ints is uint64, of signed ints int64."""
        request, dtype = _calls.reduce_request(a, op, axis)
        return _calls.reduce_result(request, self._call(self._compute.Reduce, request), dtype)

    def scan(self, a: Any, kind: str = "inclusive", axis: Optional[int] = None) -> np.ndarray:
        """Prefix sums like ``np.cumsum`` ("inclusive") or shifted by one ("exclusive"): axis
        None over the flattened array (1-D result), 0 down each column, 1 along each row."""
        request, ndim = _calls.scan_request(a, kind, axis)
        return _calls.scan_result(request, self._call(self._compute.Scan, request), ndim)

    def transpose(self, a: Any) -> np.ndarray:
        """The transpose of a 2-D array or a histogram, computed on the daemon."""
        request, ndim, dtype = _calls.transpose_request(a)
        response = self._call(self._compute.Transpose, request)
        return _calls.transpose_result(response, ndim, dtype)

    def matmul(self, a: Any, b: Any, c: Any = None, *, alpha: float = 1.0,
               beta: float = 0.0) -> np.ndarray:
        """``alpha * a @ b + beta * c`` in float32 on the daemon; a and b may be histograms
        (read as float32); inline inputs are converted to float32 first."""
        request, ndims = _calls.matmul_request(a, b, c, alpha, beta)
        return _calls.matmul_result(self._call(self._compute.Matmul, request), ndims)
