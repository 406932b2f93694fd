"""Histogram: a handle on one histogram in the daemon (blocking API).

Contract: a handle holds the histogram's name and spec (shape, cap, axes) as of when it was
made; every method is one or a few RPCs through its Client, so values always come from the
daemon (a query sees every sample acknowledged before it began). A handle stays valid
while the histogram exists; after delete() its calls raise NotFoundError. See the README
for the orientation rules: ``values()`` is rows x cols, UHI views are (x, y) = (cols, rows).

Thread safety: as the Client's (handles may be used from many threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional, Tuple, Union

import numpy as np

from histd import _calls
from histd._calls import Cycle, View
from histd._types import Cdf, HistogramInfo, Quantiles, Range
from histd._view import RangeArg, Snapshot

if TYPE_CHECKING:
    from histd._client import Client

__all__ = ["Histogram"]

Rebin = Union[None, int, Tuple[int, int]]


class Histogram:
    """A handle on a histogram in histd. Made by ``Client.create()`` or
    ``Client.histogram()``."""

    _histd_handle = True  # compute calls read a handle as its histogram on the server

    def __init__(self, client: "Client", info: HistogramInfo) -> None:
        self._client = client
        self._spec = info

    # -- spec --------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, cols)."""
        return self._spec.shape

    @property
    def rows(self) -> int:
        return self._spec.rows

    @property
    def cols(self) -> int:
        return self._spec.cols

    @property
    def cap(self) -> int:
        return self._spec.cap

    @property
    def x(self) -> Optional[Range]:
        """The x axis (over the columns) as (lo, hi), or None."""
        return self._spec.x

    @property
    def y(self) -> Optional[Range]:
        """The y axis (over the rows) as (lo, hi), or None."""
        return self._spec.y

    def info(self) -> HistogramInfo:
        """Every counter now (HistogramInfo)."""
        return self._client.info(self.name)

    def __repr__(self) -> str:
        axes = "".join(f", {k}={v}" for k, v in (("x", self.x), ("y", self.y)) if v)
        return f"Histogram({self.name!r}, rows={self.rows}, cols={self.cols}, cap={self.cap}{axes})"

    # -- filling -----------------------------------------------------------------------------

    def fill(self, indices: Any = None, *, x: Any = None, y: Any = None, xy: Any = None,
             max_message_bytes: int = 1 << 20, window: int = 32,
             progress: Optional[bool] = None) -> "Histogram":
        """Adds samples and returns once the daemon has applied them (every message
        acknowledged OK); returns self.

        ``indices``: flat bin indices (row * cols + col), any integer dtype, or floats holding
        integers; each must be below rows * cols (checked for the whole array first:
        ValueError, nothing sent). ``x=`` and ``y=``: coordinates on the histogram's axes,
        sent as float32. ``xy=``: an (n, 2) array of (x, y) rows (float32 C-contiguous input
        is sent without a copy). Messages of ``max_message_bytes``, at most ``window`` in
        flight. The first rejected message raises IngestError (its status and message) once
        the messages in flight are acknowledged; samples after it are not sent.
        """
        self._client.fill(self.name, indices, x=x, y=y, xy=xy,
                          max_message_bytes=max_message_bytes, window=window,
                          progress=progress, limit=self._spec.bins)
        return self

    # -- reading -----------------------------------------------------------------------------

    def values(self, rows: RangeArg = None, cols: RangeArg = None, rebin: Rebin = None,
               transpose: bool = False) -> np.ndarray:
        """The bins, rows x cols (uint8); a region with ``rows=`` / ``cols=`` (slices, numpy
        rules; an int is one row / column); ``rebin=f`` or ``(row_factor, col_factor)`` sums
        blocks (uint32; a partial last block sums what it has); ``transpose`` returns
        cols x rows. Large results stream in chunks."""
        plan = _calls.query_plan(self._spec, rows, cols, rebin, transpose,
                                 self._client.query_chunk_bytes)
        return self._client._run_query(plan)

    def snapshot(self, rows: RangeArg = None, cols: RangeArg = None,
                 rebin: Rebin = None) -> Snapshot:
        """The bins with their axes as a UHI PlottableHistogram (see Snapshot)."""
        plan = _calls.query_plan(self._spec, rows, cols, rebin, False,
                                 self._client.query_chunk_bytes)
        return plan.snapshot(self._client._run_query(plan))

    def __getitem__(self, key: Any) -> Union[Snapshot, int]:
        """UHI indexing, axes (x, y): ``h[c0:c1, r0:r1]``, ``h[::histd.rebin(4), :]``,
        ``h[histd.loc(0.5):histd.loc(1.5), :]`` give a Snapshot; ``h[col, row]`` one bin."""
        plan, scalar = _calls.uhi_plan(self._spec, key, self._client.query_chunk_bytes)
        bins = self._client._run_query(plan)
        return int(bins[0, 0]) if scalar else plan.snapshot(bins)

    def to_numpy(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(counts, x edges, y edges) as ``np.histogram2d`` returns them: counts is
        cols x rows (x first)."""
        return self.snapshot().to_numpy()

    def to_hist(self) -> Any:
        """A ``hist.Hist`` (Int64 storage, axes x and y without flow bins)."""
        return self.snapshot().to_hist()

    def to_boost(self) -> Any:
        """A ``boost_histogram.Histogram`` (Int64 storage, axes x and y without flow bins)."""
        return self.snapshot().to_boost()

    def render(self, width: int = 0, height: int = 0, *, rows: RangeArg = None,
               cols: RangeArg = None, scale: str = "linear", zmin: Optional[float] = None,
               zmax: Optional[float] = None, pool: str = "sum", bare: bool = False) -> bytes:
        """A PNG heatmap drawn by the daemon (docs/rendering.md): the region pooled by the
        engine to exactly ``width`` x ``height`` pixels (0: the region's bins, at most 1024),
        viridis colours on a ``linear`` or ``log`` scale from ``zmin`` to ``zmax`` (default
        0 or 1 to the largest value), saturated cells red; unless ``bare``, tick labels and a
        colour bar around it. ``pool``: each pixel's bins summed (``sum``) or their largest
        (``max``)."""
        return self._client._render(_calls.render_request(
            self._spec, width, height, rows, cols, scale, zmin, zmax, pool, bare))

    def watch(self, shape: Tuple[int, int] = (256, 1024), *, rows: RangeArg = None,
              cols: RangeArg = None, pool: str = "sum", interval: float = 1.0) -> Iterator[View]:
        """Follows the histogram live: yields a View (``values``: the region pooled to at most
        ``shape`` cells) at once, then each time it changes, looking every ``interval``
        seconds. Runs until the caller stops iterating (the stream is cancelled) or the
        daemon ends it (a HistdError: UNAVAILABLE at shutdown)."""
        return self._client._watch(_calls.watch_request(self._spec, shape, rows, cols, pool,
                                                        interval))

    def projection(self, axis: str = "x") -> np.ndarray:
        """Sums onto one axis (uint64): ``"x"`` one sum per column (``values().sum(axis=0)``),
        ``"y"`` one per row (``values().sum(axis=1)``)."""
        return self._client._project(self.name, axis)

    def cdf(self, axis: str = "x") -> Cdf:
        """The CDF of ``projection(axis)``."""
        return self._client._cdf(self.name, axis)

    def quantiles(self, probabilities: Any, axis: str = "x") -> Quantiles:
        """Where the CDF of ``projection(axis)`` reaches each probability (in [0, 1])."""
        return self._client._quantiles(self.name, probabilities, axis)

    # -- lifecycle ---------------------------------------------------------------------------

    def reset(self) -> HistogramInfo:
        """Zeroes every bin and counter; returns the info after."""
        return self._client.reset(self.name)

    def read_and_reset(self) -> Cycle:
        """One monitoring cycle: returns ``Cycle(values, info)`` (the bins, rows x cols uint8,
        and the counters of exactly those samples) and zeroes both in one step, so that every
        sample lands in exactly one cycle. See Client.read_and_reset()."""
        return self._client.read_and_reset(self.name)

    def merge(self, source: Union[str, "Histogram"]) -> HistogramInfo:
        """Adds every bin of ``source`` (same shape) into this histogram, saturating at this
        histogram's cap; returns this histogram's info after."""
        name = source if isinstance(source, str) else source.name
        return self._client.merge(name, self.name)

    def delete(self) -> None:
        """Deletes the histogram from the daemon."""
        self._client.delete(self.name)
