"""numpy <-> wire: ingest payloads, IngestRequest encoding, histd.v1.Array conversion.

Contract:
- Bin indices of any integer or float dtype become packed little-endian uint32 after a
  range check of the whole input (0 <= i < limit, integral and finite for floats): a
  ValueError names the first offending position and nothing is sent. A C-contiguous
  little-endian uint32 array is used in place (no copy); others are converted in chunks of
  ``chunk`` samples, so the converted copy held at once stays bounded.
- Coordinates become float32 pairs x0, y0, x1, y1, ... (the wire type): float64 values are
  rounded to the nearest float32, values beyond float32's range become +-inf (counted as
  overflow/underflow like any value outside the axis), NaN stays NaN.
- encode_ingest_request() writes the protobuf encoding of IngestRequest by hand so that a
  payload is copied once, into the request bytes (tests check it against protobuf's).
- Compute arrays: 0-, 1- and 2-D numpy arrays of bool/int/uint/float dtypes go to the
  nearest wire dtype that holds every value exactly (int8/int16 -> I32, uint16 -> U32,
  bool -> U8, float16 -> F32); results come back as native-endian 2-D arrays.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

import numpy as np

from histd.v1 import common_pb2, ingest_pb2

__all__ = [
    "TYPE_INDEX",
    "TYPE_XY",
    "index_chunks",
    "xy_chunks",
    "encode_ingest_request",
    "to_proto_array",
    "from_proto_array",
    "WIRE_DTYPES",
]

TYPE_INDEX = ingest_pb2.SAMPLE_TYPE_BIN_INDEX_U32
TYPE_XY = ingest_pb2.SAMPLE_TYPE_XY_F32
_U32_MAX = 2**32 - 1
_U32_LE = np.dtype("<u4")
_F32_LE = np.dtype("<f4")

WIRE_DTYPES: Dict[int, np.dtype] = {
    common_pb2.DTYPE_U8: np.dtype("<u1"),
    common_pb2.DTYPE_I32: np.dtype("<i4"),
    common_pb2.DTYPE_I64: np.dtype("<i8"),
    common_pb2.DTYPE_U32: np.dtype("<u4"),
    common_pb2.DTYPE_U64: np.dtype("<u8"),
    common_pb2.DTYPE_F32: np.dtype("<f4"),
    common_pb2.DTYPE_F64: np.dtype("<f8"),
}
_TO_WIRE: Dict[tuple, Any] = {
    ("b", 1): common_pb2.DTYPE_U8,
    ("u", 1): common_pb2.DTYPE_U8,
    ("u", 2): common_pb2.DTYPE_U32,
    ("u", 4): common_pb2.DTYPE_U32,
    ("u", 8): common_pb2.DTYPE_U64,
    ("i", 1): common_pb2.DTYPE_I32,
    ("i", 2): common_pb2.DTYPE_I32,
    ("i", 4): common_pb2.DTYPE_I32,
    ("i", 8): common_pb2.DTYPE_I64,
    ("f", 2): common_pb2.DTYPE_F32,
    ("f", 4): common_pb2.DTYPE_F32,
    ("f", 8): common_pb2.DTYPE_F64,
}


def _numeric_1d(values: Any, what: str) -> np.ndarray:
    a = np.asarray(values)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{what}: want an integer or float array, got dtype {a.dtype}")
    return a.reshape(-1)


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def check_indices(indices: Any, limit: Optional[int]) -> np.ndarray:
    """The indices as a flat numeric array, after checking every value is an integral bin
    index below ``limit`` (the histogram's rows * cols; None: below 2**32)."""
    a = _numeric_1d(indices, "indices")
    if a.size == 0:
        return a
    top = _U32_MAX if limit is None else min(limit - 1, _U32_MAX)
    what = "2**32" if limit is None else f"{limit} bins"
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.floor(a))
        if bad.any():
            i = _first_bad(bad)
            raise ValueError(f"indices[{i}] = {a[i].item()!r} is not an integral bin index")
    lo = 0 if a.dtype.kind == "u" else a.min()
    if lo < 0 or a.max() > top:
        i = _first_bad((a < 0) | (a > top))
        raise ValueError(f"indices[{i}] = {a[i].item()!r} is outside 0..{top} ({what})")
    return a


def index_chunks(a: np.ndarray, chunk: int) -> Iterator[memoryview]:
    """Packed uint32 payload pieces of a checked index array (check_indices)."""
    if a.dtype == _U32_LE and a.flags.c_contiguous:
        yield a.data.cast("B")
        return
    for start in range(0, a.size, chunk):
        yield a[start:start + chunk].astype(_U32_LE).data.cast("B")


def check_xy(x: Any, y: Any) -> tuple:
    xs = _numeric_1d(x, "x")
    ys = _numeric_1d(y, "y")
    if xs.size != ys.size:
        raise ValueError(f"x and y differ in length: {xs.size} and {ys.size}")
    return xs, ys


def xy_chunks(xs: np.ndarray, ys: np.ndarray, chunk: int) -> Iterator[memoryview]:
    """Packed float32 (x, y) pair payload pieces of two equally long arrays."""
    for start in range(0, xs.size, chunk):
        stop = min(start + chunk, xs.size)
        pairs = np.empty((stop - start, 2), dtype=_F32_LE)
        with np.errstate(over="ignore", invalid="ignore"):
            pairs[:, 0] = xs[start:stop]
            pairs[:, 1] = ys[start:stop]
        yield pairs.data.cast("B")


def xy_pairs_chunks(xy: Any, chunk: int) -> Iterator[memoryview]:
    """Payload pieces of an (n, 2) array of (x, y) rows; float32 little-endian C-contiguous
    input is used in place."""
    a = np.asarray(xy)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"xy: want shape (n, 2), got {a.shape}")
    if a.dtype == _F32_LE and a.flags.c_contiguous:
        if a.size:
            yield a.data.cast("B")
        return
    yield from xy_chunks(a[:, 0], a[:, 1], chunk)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_ingest_request(sequence: int, histogram: bytes, sample_type: int,
                          payload: Any) -> bytes:
    """IngestRequest{sequence, histogram, type, samples=payload}.SerializeToString(),
    copying the payload once."""
    size = len(payload) if not isinstance(payload, memoryview) else payload.nbytes
    header = b"".join((
        b"\x08", _varint(sequence),
        b"\x12", _varint(len(histogram)), histogram,
        b"\x18", _varint(sample_type),
        b"\x22" + _varint(size) if size else b"",
    ))
    return b"".join((header, payload)) if size else header


def to_proto_array(values: Any, what: str = "array") -> "common_pb2.Array":
    """A numpy array (0-, 1- or 2-D) as a histd.v1.Array; 1-D arrays are 1 x n."""
    a = np.asarray(values)
    if a.ndim > 2:
        raise ValueError(f"{what}: histd arrays are at most 2-D, got shape {a.shape}")
    wire = _TO_WIRE.get((a.dtype.kind, a.dtype.itemsize))
    if wire is None:
        raise TypeError(f"{what}: dtype {a.dtype} has no histd wire type")
    rows, cols = (1, a.size) if a.ndim < 2 else a.shape
    data = np.ascontiguousarray(a, dtype=WIRE_DTYPES[wire]).tobytes()
    return common_pb2.Array(dtype=wire, rows=rows, cols=cols, data=data)


def from_proto_array(array: "common_pb2.Array") -> np.ndarray:
    """A histd.v1.Array as a native-endian rows x cols numpy array."""
    dtype = WIRE_DTYPES.get(array.dtype)
    if dtype is None:
        raise ValueError(f"server returned an array of unknown dtype {array.dtype}")
    if len(array.data) != array.rows * array.cols * dtype.itemsize:
        raise ValueError(
            f"server returned {len(array.data)} bytes for a {array.rows} x {array.cols} "
            f"{dtype} array")
    out = np.frombuffer(array.data, dtype=dtype).reshape(array.rows, array.cols)
    return out.astype(dtype.newbyteorder("="), copy=True)
