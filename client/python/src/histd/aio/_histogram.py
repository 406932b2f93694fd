"""AsyncHistogram: histd.Histogram's API as coroutines (see histd/_histogram.py).

Contract: every method of histd.Histogram that calls the daemon is a coroutine here, with
the same arguments and results; ``h[key]`` returns an awaitable (``await h[::histd.rebin(2),
:]``). Spec properties (name, shape, cap, axes) are plain attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Optional, Tuple, Union

import numpy as np

from histd import _calls
from histd._calls import Cycle, View
from histd._types import Cdf, HistogramInfo, Quantiles, Range
from histd._view import RangeArg, Snapshot

if TYPE_CHECKING:
    from histd.aio._client import Client

__all__ = ["AsyncHistogram"]

Rebin = Union[None, int, Tuple[int, int]]


class AsyncHistogram:
    """A handle on a histogram in histd, for asyncio. Made by ``await client.create()`` or
    ``await client.histogram()``."""

    _histd_handle = True

    def __init__(self, client: "Client", info: HistogramInfo) -> None:
        self._client = client
        self._spec = info

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def shape(self) -> Tuple[int, int]:
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
        return self._spec.x

    @property
    def y(self) -> Optional[Range]:
        return self._spec.y

    def __repr__(self) -> str:
        return f"AsyncHistogram({self.name!r}, rows={self.rows}, cols={self.cols})"

    async def info(self) -> HistogramInfo:
        return await self._client.info(self.name)

    async def fill(self, indices: Any = None, *, x: Any = None, y: Any = None, xy: Any = None,
                   max_message_bytes: int = 1 << 20, window: int = 32,
                   progress: Optional[bool] = None) -> "AsyncHistogram":
        """As histd.Histogram.fill()."""
        await self._client.fill(self.name, indices, x=x, y=y, xy=xy,
                                max_message_bytes=max_message_bytes, window=window,
                                progress=progress, limit=self._spec.bins)
        return self

    async def values(self, rows: RangeArg = None, cols: RangeArg = None, rebin: Rebin = None,
                     transpose: bool = False) -> np.ndarray:
        plan = _calls.query_plan(self._spec, rows, cols, rebin, transpose,
                                 self._client.query_chunk_bytes)
        return await self._client._run_query(plan)

    async def snapshot(self, rows: RangeArg = None, cols: RangeArg = None,
                       rebin: Rebin = None) -> Snapshot:
        plan = _calls.query_plan(self._spec, rows, cols, rebin, False,
                                 self._client.query_chunk_bytes)
        return plan.snapshot(await self._client._run_query(plan))

    def __getitem__(self, key: Any) -> Awaitable[Union[Snapshot, int]]:
        plan, scalar = _calls.uhi_plan(self._spec, key, self._client.query_chunk_bytes)

        async def run() -> Union[Snapshot, int]:
            bins = await self._client._run_query(plan)
            return int(bins[0, 0]) if scalar else plan.snapshot(bins)
        return run()

    async def to_numpy(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (await self.snapshot()).to_numpy()

    async def to_hist(self) -> Any:
        return (await self.snapshot()).to_hist()

    async def to_boost(self) -> Any:
        return (await self.snapshot()).to_boost()

    async def render(self, width: int = 0, height: int = 0, *, rows: RangeArg = None,
                     cols: RangeArg = None, scale: str = "linear", zmin: Optional[float] = None,
                     zmax: Optional[float] = None, pool: str = "sum", bare: bool = False) -> bytes:
        """As histd.Histogram.render: PNG bytes drawn by the daemon."""
        return await self._client._render(_calls.render_request(
            self._spec, width, height, rows, cols, scale, zmin, zmax, pool, bare))

    def watch(self, shape: Tuple[int, int] = (256, 1024), *, rows: RangeArg = None,
              cols: RangeArg = None, pool: str = "sum",
              interval: float = 1.0) -> AsyncIterator[View]:
        """As histd.Histogram.watch, an async iterator: ``async for view in h.watch(): ...``."""
        return self._client._watch(_calls.watch_request(self._spec, shape, rows, cols, pool,
                                                        interval))

    async def projection(self, axis: str = "x") -> np.ndarray:
        return await self._client._project(self.name, axis)

    async def cdf(self, axis: str = "x") -> Cdf:
        return await self._client._cdf(self.name, axis)

    async def quantiles(self, probabilities: Any, axis: str = "x") -> Quantiles:
        return await self._client._quantiles(self.name, probabilities, axis)

    async def reset(self) -> HistogramInfo:
        return await self._client.reset(self.name)

    async def read_and_reset(self) -> Cycle:
        return await self._client.read_and_reset(self.name)

    async def merge(self, source: Union[str, "AsyncHistogram"]) -> HistogramInfo:
        name = source if isinstance(source, str) else source.name
        return await self._client.merge(name, self.name)

    async def delete(self) -> None:
        await self._client.delete(self.name)
