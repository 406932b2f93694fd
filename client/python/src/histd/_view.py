"""Region and rebin arguments, query reassembly, and Snapshot: a UHI PlottableHistogram.

Orientation. histd stores a histogram as rows x cols (``Histogram.values()`` is that
array, like an image of the wafer); the x axis runs over the columns and the y axis over the
rows. UHI, boost-histogram, hist and ``np.histogram2d`` order axes (x, y), so a Snapshot's
``values()``, ``counts()`` and ``to_numpy()`` are the transpose, shape (cols, rows), and
UHI-style indexing ``h[x_key, y_key]`` takes the columns first. ``Snapshot.bins`` keeps the
rows x cols array.

Edges. With an axis, bin k of n over [lo, hi) spans lo + k (hi - lo) / n .. lo + (k + 1)
(hi - lo) / n (float64; the daemon bins exactly against those edges); without one, the
edges are bin numbers 0, 1, ..., n. Rebinning by f merges blocks of f bins; the last block
of a region may be partial, so its edges come from the region's end.

Flow. histd counts under/overflow per axis (HistogramInfo), not per bin, so snapshots have
no flow bins; ``to_hist()`` / ``to_boost()`` build axes without them.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

from histd._arrays import WIRE_DTYPES
from histd._types import Range

__all__ = ["Snapshot", "Axis", "rebin", "loc", "resolve_range", "resolve_rebin",
           "assemble_chunks", "ChunkAssembler", "edges_for"]

RangeArg = Union[None, int, slice]


class rebin:  # noqa: N801 - UHI spelling
    """A UHI rebin action for the step of a slice: ``h[::histd.rebin(4), :]``. boost-histogram's
    and hist's ``rebin`` work as well (anything with a ``factor``)."""

    def __init__(self, factor: int) -> None:
        if factor < 1:
            raise ValueError("rebin factor must be >= 1")
        self.factor = factor

    def __repr__(self) -> str:
        return f"rebin({self.factor})"


class loc:  # noqa: N801 - UHI spelling
    """A UHI locator: the bin holding a coordinate, plus ``offset`` bins. boost-histogram's and
    hist's ``loc`` and hist's complex shorthand (``2.5j``) work as well."""

    def __init__(self, value: float, offset: int = 0) -> None:
        self.value = value
        self.offset = offset


def resolve_range(arg: RangeArg, n: int, what: str) -> Tuple[int, int]:
    """[begin, end) of ``arg`` over n bins, numpy's slicing rules (negative indices count
    from the end, out-of-range bounds clamp); an int is that one bin."""
    if arg is None:
        return 0, n
    if isinstance(arg, slice):
        if arg.step not in (None, 1):
            raise ValueError(f"{what}: a slice step is not supported; use rebin=")
        begin, end, _ = arg.indices(n)
        return begin, max(begin, end)
    if isinstance(arg, (int, np.integer)):
        i = int(arg)
        if not -n <= i < n:
            raise IndexError(f"{what} index {i} is out of range for {n} bins")
        i %= n
        return i, i + 1
    raise TypeError(f"{what}: want None, an int or a slice, got {type(arg).__name__}")


def resolve_rebin(arg: Union[None, int, Tuple[int, int]]) -> Tuple[int, int]:
    """(row factor, col factor) of ``rebin=``: None, one int for both, or (rows, cols)."""
    if arg is None:
        return 1, 1
    pair = (arg, arg) if isinstance(arg, (int, np.integer)) else tuple(arg)
    if len(pair) != 2 or any(int(f) < 1 for f in pair):
        raise ValueError(f"rebin: want a factor >= 1 or (row_factor, col_factor), got {arg!r}")
    return int(pair[0]), int(pair[1])


def axis_edges(n: int, axis: Optional[Range]) -> np.ndarray:
    """The n + 1 edges of a whole dimension."""
    if axis is None:
        return np.arange(n + 1, dtype=np.float64)
    lo, hi = axis
    return lo + (hi - lo) * (np.arange(n + 1, dtype=np.float64) / n)


def edges_for(n: int, axis: Optional[Range], begin: int, end: int, factor: int) -> np.ndarray:
    """Edges of the region [begin, end) of one dimension rebinned by factor."""
    picks = list(range(begin, end, factor)) + [end]
    return axis_edges(n, axis)[picks]


def _loc_index(value: Any, n: int, axis: Optional[Range]) -> int:
    if isinstance(value, complex):
        v, offset = value.imag, 0
    else:
        v, offset = value.value, int(getattr(value, "offset", 0))
    lo, hi = axis if axis is not None else (0.0, float(n))
    k = int(np.floor((float(v) - lo) / (hi - lo) * n))
    return min(max(k, -1), n) + offset


def _bound(value: Any, n: int, axis: Optional[Range]) -> Optional[int]:
    if value is None or isinstance(value, (int, np.integer)):
        return None if value is None else int(value)
    if isinstance(value, complex) or hasattr(value, "value"):
        return min(max(_loc_index(value, n, axis), 0), n)
    raise TypeError(f"slice bound {value!r}: want an int, histd.loc(...) or a complex number")


def uhi_key(key: Any, n: int, axis: Optional[Range], what: str) -> Tuple[Any, int]:
    """One element of ``h[x_key, y_key]`` as (int or slice over bins, rebin factor)."""
    if key is Ellipsis:
        return slice(None), 1
    if isinstance(key, slice):
        factor: Any = 1
        if key.step is not None:
            factor = getattr(key.step, "factor", None)
            if not isinstance(factor, (int, np.integer)):
                raise TypeError(f"{what}: a slice step must be a rebin action "
                                "(histd.rebin(k), bh.rebin(k), hist.rebin(k))")
        return slice(_bound(key.start, n, axis), _bound(key.stop, n, axis)), int(factor)
    if isinstance(key, (int, np.integer)):
        return int(key), 1
    if isinstance(key, complex) or hasattr(key, "value"):
        k = _loc_index(key, n, axis)
        if not 0 <= k < n:
            raise IndexError(f"{what}: {key!r} is outside the axis")
        return k, 1
    raise TypeError(f"{what}: unsupported index {key!r}")


class ChunkAssembler:
    """Reassembles a QueryChunk stream into its rows x cols array as the chunks arrive,
    checking that they are contiguous and add up to the header's total_bytes."""

    def __init__(self) -> None:
        self._out: Optional[np.ndarray] = None
        self._header: Any = None
        self._offset = 0

    def add(self, chunk: Any) -> None:
        if self._header is None:
            dtype = WIRE_DTYPES.get(chunk.dtype)
            if dtype is None:
                raise ValueError(f"query returned unknown dtype {chunk.dtype}")
            if chunk.rows * chunk.cols * dtype.itemsize != chunk.total_bytes:
                raise ValueError("query header: rows * cols * itemsize != total_bytes")
            self._header = chunk
            self._out = np.empty(chunk.total_bytes, dtype=np.uint8)
        offset, size = self._offset, len(chunk.data)
        if chunk.offset != offset or offset + size > self._header.total_bytes:
            raise ValueError(f"query chunk at offset {chunk.offset}, expected {offset}")
        assert self._out is not None
        self._out[offset:offset + size] = np.frombuffer(chunk.data, dtype=np.uint8)
        self._offset = offset + size

    def result(self) -> np.ndarray:
        header = self._header
        if header is None:
            raise ValueError("query returned no chunk")
        if self._offset != header.total_bytes:
            raise ValueError(f"query returned {self._offset} of {header.total_bytes} bytes")
        dtype = WIRE_DTYPES[header.dtype]
        assert self._out is not None
        array = self._out.view(dtype).reshape(header.rows, header.cols)
        return array.astype(dtype.newbyteorder("="), copy=False)


def assemble_chunks(chunks: Iterable[Any]) -> np.ndarray:
    """The array of a whole QueryChunk stream (see ChunkAssembler)."""
    assembler = ChunkAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.result()


class _Traits:
    circular = False
    discrete = False


class Axis:
    """One axis of a Snapshot, a UHI PlottableAxis: ``axis[i]`` is bin i's (lower, upper)
    edge pair; ``edges``, ``centers``, ``widths`` as numpy arrays."""

    traits = _Traits()

    def __init__(self, edges: np.ndarray, name: str, label: str,
                 regular: Optional[Tuple[int, float, float]]) -> None:
        self.edges = edges
        self.name = name
        self.label = label
        self.regular = regular  # (bins, lo, hi) when the edges are evenly spaced

    def __len__(self) -> int:
        return len(self.edges) - 1

    def __getitem__(self, index: int) -> Tuple[float, float]:
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        return (float(self.edges[index]), float(self.edges[index + 1]))

    def __iter__(self) -> Iterator[Tuple[float, float]]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Axis) and np.array_equal(self.edges, other.edges)

    __hash__ = None  # type: ignore[assignment]

    @property
    def centers(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    def __repr__(self) -> str:
        return f"Axis({self.name!r}, {len(self)} bins, {self.edges[0]:g}..{self.edges[-1]:g})"

    def _ir(self) -> dict:
        common = {"underflow": False, "overflow": False, "circular": False,
                  "metadata": {"name": self.name, "label": self.label}}
        if self.regular is not None:
            n, lo, hi = self.regular
            return {"type": "regular", "lower": lo, "upper": hi, "bins": n, **common}
        return {"type": "variable", "edges": self.edges, **common}


class Snapshot:
    """Bins read from histd at one moment, with their axes: a UHI PlottableHistogram (kind
    COUNT, values() / counts() of shape (cols, rows) for axes (x, y), variances() None), so
    ``mplhep.hist2dplot(snapshot)``, ``hist.Hist(snapshot)`` and
    ``boost_histogram.Histogram(snapshot)`` work. ``bins`` is the rows x cols array."""

    kind = "COUNT"

    def __init__(self, name: str, bins: np.ndarray, x: Axis, y: Axis, cap: int) -> None:
        self.name = name
        self.bins = bins
        self.axes: Sequence[Axis] = (x, y)
        self.cap = cap

    def values(self) -> np.ndarray:
        """Counts with axes (x, y): ``bins.T``."""
        return self.bins.T

    def counts(self) -> np.ndarray:
        return self.bins.T

    def variances(self) -> None:
        """None: saturated bins have no meaningful variance."""
        return None

    def to_numpy(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(counts, x edges, y edges), as ``np.histogram2d`` returns them."""
        return self.bins.T, self.axes[0].edges, self.axes[1].edges

    def _to_uhi_(self) -> dict:
        return {"uhi_schema": 1, "axes": [a._ir() for a in self.axes],
                "storage": {"type": "int", "values": self.bins.T.astype(np.int64)},
                "metadata": {"name": self.name}}

    def _to_boost_histogram_(self) -> Any:  # boost_histogram.Histogram(snapshot), as uproot
        return self.to_boost()

    def to_boost(self) -> Any:
        """A boost_histogram.Histogram (Int64 storage, axes without flow bins)."""
        import boost_histogram as bh

        axes: list = []
        for a in self.axes:
            if a.regular is not None:
                axes.append(bh.axis.Regular(a.regular[0], a.regular[1], a.regular[2],
                                            underflow=False, overflow=False,
                                            metadata={"name": a.name}))
            else:
                axes.append(bh.axis.Variable(a.edges, underflow=False, overflow=False,
                                             metadata={"name": a.name}))
        h = bh.Histogram(*axes, storage=bh.storage.Int64())
        h.view()[...] = self.bins.T
        return h

    def to_hist(self) -> Any:
        """A hist.Hist (Int64 storage) with axes named ``x`` and ``y``."""
        import hist

        axes: list = []
        for a in self.axes:
            if a.regular is not None:
                axes.append(hist.axis.Regular(a.regular[0], a.regular[1], a.regular[2],
                                              name=a.name, label=a.label, flow=False))
            else:
                axes.append(hist.axis.Variable(a.edges, name=a.name, label=a.label, flow=False))
        h = hist.Hist(*axes, storage=hist.storage.Int64(), name=self.name)
        h.view()[...] = self.bins.T
        return h

    def __repr__(self) -> str:
        return (f"Snapshot({self.name!r}, {self.bins.shape[0]} rows x {self.bins.shape[1]} "
                f"cols, {self.bins.dtype}, total {int(self.bins.sum())})")


def make_axis(name: str, n: int, axis: Optional[Range], begin: int, end: int,
              factor: int) -> Axis:
    edges = edges_for(n, axis, begin, end, factor)
    out = end - begin
    even = out % factor == 0 and out > 0
    regular = (out // factor, float(edges[0]), float(edges[-1])) if even else None
    label = name if axis is not None else f"{'column' if name == 'x' else 'row'} bin"
    return Axis(edges, name, label, regular)
