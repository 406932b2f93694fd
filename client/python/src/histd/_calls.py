"""Request building and response shaping shared by the sync and asyncio clients.

Contract: each ``*_request`` function checks the Python arguments (raising ValueError /
TypeError / IndexError before anything is sent) and returns the protobuf request; each
``*_result`` function turns the response into numpy / dataclass results. No I/O here.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple, Union

import grpc
import numpy as np

from histd import _arrays
from histd._errors import HistdError, error_from_code
from histd._types import Cdf, HistogramInfo, Quantiles, Range
from histd._view import (RangeArg, Snapshot, make_axis, resolve_range, resolve_rebin,
                         uhi_key)
from histd.v1 import common_pb2, compute_pb2, histograms_pb2, query_pb2

__all__ = [
    "spec", "QueryPlan", "query_plan", "uhi_plan", "dim_of", "project_result", "cdf_result",
    "quantiles_request", "Cycle", "CycleAssembler", "quantiles_result", "array_input", "reduce_request",
    "reduce_result", "scan_request", "scan_result", "transpose_request", "transpose_result", "matmul_request",
    "matmul_result", "render_request", "watch_request", "View", "view_result",
]


def spec(name: str, rows: int, cols: int, cap: int, x: Optional[Range],
         y: Optional[Range]) -> histograms_pb2.HistogramSpec:
    if not 1 <= cap <= 255:
        raise ValueError(f"cap must be 1..255, got {cap}")
    if rows < 1 or cols < 1:
        raise ValueError(f"rows and cols must be >= 1, got {rows} x {cols}")
    s = histograms_pb2.HistogramSpec(name=name, rows=rows, cols=cols, cap=cap)
    for field, axis in (("x_axis", x), ("y_axis", y)):
        if axis is not None:
            lo, hi = axis
            getattr(s, field).CopyFrom(common_pb2.Axis(lo=lo, hi=hi))
    return s


class QueryPlan:
    """One Query call and how to present its result: the request, whether the region is
    empty (answered locally: the wire's all-zero region means the whole histogram), and the
    Snapshot axes."""

    def __init__(self, info: HistogramInfo, rows: Tuple[int, int], cols: Tuple[int, int],
                 factors: Tuple[int, int], transpose: bool, max_chunk_bytes: int) -> None:
        self.info = info
        self.rows, self.cols, self.factors, self.transpose = rows, cols, factors, transpose
        self.empty = rows[0] == rows[1] or cols[0] == cols[1]
        region = query_pb2.Region(row_begin=rows[0], row_end=rows[1], col_begin=cols[0],
                                  col_end=cols[1])
        self.request = query_pb2.QueryRequest(
            name=info.name, region=region, row_factor=factors[0], col_factor=factors[1],
            transpose=transpose, max_chunk_bytes=max_chunk_bytes)

    def empty_result(self) -> np.ndarray:
        dtype = np.uint8 if self.factors == (1, 1) else np.uint32
        r = -(-(self.rows[1] - self.rows[0]) // self.factors[0])
        c = -(-(self.cols[1] - self.cols[0]) // self.factors[1])
        return np.zeros((c, r) if self.transpose else (r, c), dtype=dtype)

    def snapshot(self, bins: np.ndarray) -> Snapshot:
        i = self.info
        x = make_axis("x", i.cols, i.x, self.cols[0], self.cols[1], self.factors[1])
        y = make_axis("y", i.rows, i.y, self.rows[0], self.rows[1], self.factors[0])
        return Snapshot(i.name, bins, x, y, i.cap)


def query_plan(info: HistogramInfo, rows: RangeArg, cols: RangeArg,
               rebin: Union[None, int, Tuple[int, int]], transpose: bool,
               max_chunk_bytes: int) -> QueryPlan:
    return QueryPlan(info, resolve_range(rows, info.rows, "rows"),
                     resolve_range(cols, info.cols, "cols"), resolve_rebin(rebin), transpose,
                     max_chunk_bytes)


def uhi_plan(info: HistogramInfo, key: Any, max_chunk_bytes: int) -> Tuple[QueryPlan, bool]:
    """The plan for ``h[x_key, y_key]`` and whether the result is one bin (both keys ints)."""
    if not isinstance(key, tuple):
        key = (key, Ellipsis)
    if len(key) != 2:
        raise IndexError(f"histd histograms have 2 axes (x, y), got {len(key)} indices")
    xk, xf = uhi_key(key[0], info.cols, info.x, "x")
    yk, yf = uhi_key(key[1], info.rows, info.y, "y")
    scalar = not isinstance(xk, slice) and not isinstance(yk, slice)
    if not scalar and (not isinstance(xk, slice) or not isinstance(yk, slice)):
        raise TypeError("index both axes with slices (i:i+1 for one bin), or both with ints")
    return query_plan(info, yk, xk, (yf, xf), False, max_chunk_bytes), scalar


def dim_of(axis: str) -> Any:
    """``"x"``: collapse the rows (one value per column); ``"y"``: collapse the columns."""
    if axis == "x":
        return common_pb2.DIM_ROWS
    if axis == "y":
        return common_pb2.DIM_COLS
    raise ValueError(f"axis: want 'x' (over the columns) or 'y' (over the rows), got {axis!r}")


def project_result(response: query_pb2.ProjectResponse) -> np.ndarray:
    return np.array(response.counts, dtype=np.uint64)


def cdf_result(response: query_pb2.CdfResponse) -> Cdf:
    return Cdf(np.array(response.cumulative, dtype=np.uint64),
               np.array(response.fraction, dtype=np.float64), int(response.total))


def quantiles_request(name: str, probabilities: Any, axis: str) -> query_pb2.QuantilesRequest:
    p = np.atleast_1d(np.asarray(probabilities, dtype=np.float64))
    if p.ndim != 1:
        raise ValueError("probabilities: want a scalar or a 1-D sequence")
    if np.any(~(p >= 0) | ~(p <= 1)):
        raise ValueError("probabilities must lie in [0, 1]")
    return query_pb2.QuantilesRequest(name=name, collapse=dim_of(axis), probabilities=p)


def quantiles_result(request: query_pb2.QuantilesRequest,
                     response: query_pb2.QuantilesResponse) -> Quantiles:
    values = np.array(response.axis_values, dtype=np.float64) if response.axis_values else None
    return Quantiles(np.array(request.probabilities, dtype=np.float64),
                     np.array(response.bin_positions, dtype=np.float64), values,
                     int(response.total))


class Cycle(NamedTuple):
    """One read-and-reset: the bins (rows x cols uint8) and the cycle's HistogramInfo (the
    counters of exactly the samples in ``values``). Unpacks as ``values, info``."""

    values: np.ndarray
    info: HistogramInfo


class CycleAssembler:
    """Reassembles a ReadAndResetChunk stream: the first chunk carries the info and
    total_bytes (rows * cols), every chunk its offset; chunks must be contiguous."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.info: Optional[HistogramInfo] = None
        self._out: Optional[np.ndarray] = None
        self._total = 0
        self._offset = 0

    def add(self, chunk: Any) -> None:
        if self.info is None:
            self.info = HistogramInfo.from_proto(chunk.info)
            self._total = chunk.total_bytes
            if self._total != self.info.rows * self.info.cols:
                raise ValueError(f"read-and-reset: total_bytes {self._total} is not rows * cols")
            self._out = np.empty(self._total, dtype=np.uint8)
        size = len(chunk.data)
        if chunk.offset != self._offset or self._offset + size > self._total:
            raise ValueError(f"read-and-reset chunk at offset {chunk.offset}, expected "
                             f"{self._offset}")
        assert self._out is not None
        self._out[self._offset:self._offset + size] = np.frombuffer(chunk.data, np.uint8)
        self._offset += size

    def result(self) -> Cycle:
        if self.info is None:
            raise ValueError("read-and-reset returned no chunk")
        if self._offset != self._total:
            raise ValueError(f"read-and-reset returned {self._offset} of {self._total} bytes")
        assert self._out is not None
        return Cycle(self._out.reshape(self.info.rows, self.info.cols), self.info)

    def failed(self, error: HistdError) -> HistdError:
        """The error of a stream that broke; after the first chunk the histogram was reset
        on the server and this cycle's bins are lost, which the message says."""
        if self.info is not None:
            return error_from_code(error.code, f"{error.details} (after the first chunk: "
                                   f"'{self.name}' was reset, this cycle's bins are lost)")
        return error


# -- compute ---------------------------------------------------------------------------------

_REDUCE_OPS = {"sum": compute_pb2.REDUCE_OP_SUM, "min": compute_pb2.REDUCE_OP_MIN,
               "max": compute_pb2.REDUCE_OP_MAX}
_SCAN_KINDS = {"inclusive": compute_pb2.SCAN_KIND_INCLUSIVE,
               "exclusive": compute_pb2.SCAN_KIND_EXCLUSIVE}


def array_input(value: Any, what: str) -> Tuple[compute_pb2.ArrayInput, int, Optional[np.dtype]]:
    """(ArrayInput, ndim, dtype): a histogram handle or name is read on the server (2-D,
    dtype None), anything else is sent inline (dtype: the caller's, which results that keep
    the input type are cast back to: the wire widens int8/int16/uint16/bool/float16)."""
    if _is_histogram(value):
        name = value if isinstance(value, str) else value.name
        return compute_pb2.ArrayInput(histogram=name), 2, None
    a = np.asarray(value)
    return compute_pb2.ArrayInput(inline=_arrays.to_proto_array(a, what)), a.ndim, a.dtype


def _as_input_type(result: np.ndarray, dtype: Optional[np.dtype]) -> np.ndarray:
    return result if dtype is None else result.astype(dtype.newbyteorder("="), copy=False)


def _dim(axis: Optional[int], ndim: int) -> Any:
    if axis is None or ndim < 2:
        if axis not in (None, 0, -1):
            raise ValueError(f"axis {axis} is out of range for a {ndim}-D array")
        return common_pb2.DIM_UNSPECIFIED
    if axis in (0, -2):
        return common_pb2.DIM_ROWS
    if axis in (1, -1):
        return common_pb2.DIM_COLS
    raise ValueError(f"axis {axis} is out of range for a 2-D array")


def reduce_request(value: Any, op: str,
                   axis: Optional[int]) -> Tuple[Any, Optional[np.dtype]]:
    if op not in _REDUCE_OPS:
        raise ValueError(f"op: want one of {sorted(_REDUCE_OPS)}, got {op!r}")
    source, ndim, dtype = array_input(value, "reduce input")
    return compute_pb2.ReduceRequest(input=source, op=_REDUCE_OPS[op],
                                     collapse=_dim(axis, ndim)), dtype


def reduce_result(request: compute_pb2.ReduceRequest, response: Any,
                  dtype: Optional[np.dtype]) -> Any:
    """SUM in the wire's sum type (uint64 / int64 / the float type); MIN and MAX in the
    input's dtype."""
    result = _arrays.from_proto_array(response.result)
    if request.op != compute_pb2.REDUCE_OP_SUM:
        result = _as_input_type(result, dtype)
    if request.collapse == common_pb2.DIM_UNSPECIFIED:
        return result.reshape(-1)[0]
    return result.reshape(-1)


def scan_request(value: Any, kind: str, axis: Optional[int]) -> Tuple[Any, int]:
    if kind not in _SCAN_KINDS:
        raise ValueError(f"kind: want one of {sorted(_SCAN_KINDS)}, got {kind!r}")
    source, ndim, _ = array_input(value, "scan input")
    return compute_pb2.ScanRequest(input=source, kind=_SCAN_KINDS[kind],
                                   along=_dim(axis, ndim)), ndim


def scan_result(request: compute_pb2.ScanRequest, response: Any, ndim: int) -> np.ndarray:
    result = _arrays.from_proto_array(response.result)
    if request.along == common_pb2.DIM_UNSPECIFIED:
        return result.reshape(-1)
    return result


def transpose_request(value: Any) -> Tuple[compute_pb2.TransposeRequest, int,
                                           Optional[np.dtype]]:
    source, ndim, dtype = array_input(value, "transpose input")
    return compute_pb2.TransposeRequest(input=source), ndim, dtype


def transpose_result(response: Any, ndim: int, dtype: Optional[np.dtype]) -> np.ndarray:
    result = _as_input_type(_arrays.from_proto_array(response.result), dtype)
    return result.reshape(-1) if ndim < 2 else result


def _is_histogram(value: Any) -> bool:
    return isinstance(value, str) or getattr(value, "_histd_handle", False)


def _matmul_operand(value: Any, what: str) -> compute_pb2.ArrayInput:
    if _is_histogram(value):
        return array_input(value, what)[0]
    a = np.asarray(value, dtype=np.float32)
    if a.ndim != 2:
        raise ValueError(f"{what}: want a 1-D or 2-D array, got shape {np.shape(value)}")
    return compute_pb2.ArrayInput(inline=_arrays.to_proto_array(a, what))


def matmul_request(a: Any, b: Any, c: Any, alpha: float,
                   beta: float) -> Tuple[compute_pb2.MatmulRequest, Tuple[int, int]]:
    """a @ b (alpha * a @ b + beta * c) in float32; 1-D operands as numpy.matmul promotes
    them (a to a row, b to a column, the added dimension dropped from the result)."""
    a_ndim = 2 if _is_histogram(a) else np.ndim(a)
    b_ndim = 2 if _is_histogram(b) else np.ndim(b)
    if a_ndim == 1:
        a = np.asarray(a).reshape(1, -1)
    if b_ndim == 1:
        b = np.asarray(b).reshape(-1, 1)
    request = compute_pb2.MatmulRequest(a=_matmul_operand(a, "a"), b=_matmul_operand(b, "b"))
    if c is not None:
        request.c.CopyFrom(_arrays.to_proto_array(np.asarray(c, dtype=np.float32), "c"))
    if alpha != 1.0 or beta != 0.0:
        request.use_alpha_beta = True
        request.alpha = alpha
        request.beta = beta
    return request, (a_ndim, b_ndim)


def matmul_result(response: Any, ndims: Tuple) -> np.ndarray:
    result = _arrays.from_proto_array(response.result)
    a_ndim, b_ndim = ndims
    if a_ndim == 1 and b_ndim == 1:
        return result.reshape(())
    if a_ndim == 1:
        return result.reshape(-1)
    if b_ndim == 1:
        return result.reshape(-1)
    return result



_POOLS = {"sum": query_pb2.POOL_SUM, "max": query_pb2.POOL_MAX}
_SCALES = {"linear": query_pb2.SCALE_LINEAR, "log": query_pb2.SCALE_LOG}


def _region(info: HistogramInfo, rows: RangeArg, cols: RangeArg) -> query_pb2.Region:
    r = resolve_range(rows, info.rows, "rows")
    c = resolve_range(cols, info.cols, "cols")
    if r[0] == r[1] or c[0] == c[1]:
        raise ValueError(f"rows {r[0]}:{r[1]} x cols {c[0]}:{c[1]} is empty: nothing to show")
    return query_pb2.Region(row_begin=r[0], row_end=r[1], col_begin=c[0], col_end=c[1])


def _pool(pool: str) -> Any:
    if pool not in _POOLS:
        raise ValueError(f"pool must be 'sum' or 'max', got {pool!r}")
    return _POOLS[pool]


def render_request(info: HistogramInfo, width: int, height: int, rows: RangeArg,
                   cols: RangeArg, scale: str, zmin: Optional[float], zmax: Optional[float],
                   pool: str, bare: bool) -> query_pb2.RenderRequest:
    if scale not in _SCALES:
        raise ValueError(f"scale must be 'linear' or 'log', got {scale!r}")
    if width < 0 or height < 0:
        raise ValueError(f"width and height must be >= 0, got {width} x {height}")
    request = query_pb2.RenderRequest(
        name=info.name, region=_region(info, rows, cols), width=width, height=height,
        pool=_pool(pool), scale=_SCALES[scale], bare=bare)
    if zmin is not None:
        request.zmin = float(zmin)
    if zmax is not None:
        request.zmax = float(zmax)
    return request


def watch_request(info: HistogramInfo, shape: Tuple[int, int], rows: RangeArg, cols: RangeArg,
                  pool: str, interval: float) -> query_pb2.WatchRequest:
    cells_rows, cells_cols = (int(n) for n in shape)
    if cells_rows < 1 or cells_cols < 1:
        raise ValueError(f"shape must be at least (1, 1), got {shape!r}")
    interval_ms = int(round(interval * 1000))
    if interval_ms < 1:
        raise ValueError(f"interval must be at least 0.001 s, got {interval!r}")
    return query_pb2.WatchRequest(
        name=info.name, region=_region(info, rows, cols), rows=cells_rows, cols=cells_cols,
        pool=_pool(pool), interval_ms=interval_ms)


class View(NamedTuple):
    """One Watch update: ``values`` (rows x cols, uint32 sums or uint8 maxima of each
    cell's bins), the histogram ``region`` ((row_begin, row_end), (col_begin, col_end)) it
    covers, and its ``sequence`` number (1, 2, ...)."""

    sequence: int
    values: np.ndarray
    region: Tuple[Tuple[int, int], Tuple[int, int]]


def view_result(update: query_pb2.WatchUpdate) -> View:
    dtype = {common_pb2.DTYPE_U32: np.dtype("<u4"), common_pb2.DTYPE_U8: np.dtype(np.uint8)}.get(
        update.dtype)
    if dtype is None or len(update.data) != update.rows * update.cols * dtype.itemsize:
        raise HistdError(grpc.StatusCode.INTERNAL, f"malformed watch update {update.sequence}: "
                         f"{update.rows} x {update.cols} of dtype {update.dtype} in "
                         f"{len(update.data)} bytes")
    values = np.frombuffer(update.data, dtype).reshape(update.rows, update.cols)
    r = update.region
    return View(update.sequence, values, ((r.row_begin, r.row_end), (r.col_begin, r.col_end)))
