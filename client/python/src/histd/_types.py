"""Plain result types: HistogramInfo, ServerStats, Cdf, Quantiles.

Contract: each is a frozen dataclass built from the protobuf message of the same meaning
(proto/histd/v1/histograms.proto and query.proto say what every counter counts); arrays are
numpy. ``cap`` is always 1..255 (the wire's 0 means 255).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional, Tuple

import numpy as np

from histd.v1 import histograms_pb2

__all__ = ["HistogramInfo", "ServerStats", "Cdf", "Quantiles", "Range"]

Range = Tuple[float, float]


def _axis(spec: Any, field: str) -> Optional[Range]:
    if not spec.HasField(field):
        return None
    axis = getattr(spec, field)
    return (float(axis.lo), float(axis.hi))


@dataclass(frozen=True)
class HistogramInfo:
    """A histogram's spec and every counter (see HistogramInfo in histograms.proto).

    ``x`` is the axis over the columns and ``y`` the axis over the rows, each ``(lo, hi)``
    or None. The ingest counters count since creation, the last reset or the last
    read-and-reset.
    """

    name: str
    rows: int
    cols: int
    cap: int
    x: Optional[Range]
    y: Optional[Range]
    samples_applied: int
    samples_rejected: int
    messages_applied: int
    messages_rejected: int
    x_underflow: int
    x_overflow: int
    y_underflow: int
    y_overflow: int
    samples_outside: int
    x_nan: int
    y_nan: int
    saturated_bins: int
    total_count: int
    bytes_used: int
    device: str

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, cols), the shape of ``Histogram.values()``."""
        return (self.rows, self.cols)

    @property
    def bins(self) -> int:
        """rows * cols."""
        return self.rows * self.cols

    @classmethod
    def from_proto(cls, info: "histograms_pb2.HistogramInfo") -> "HistogramInfo":
        spec = info.spec
        counters = {
            f.name: getattr(info, f.name)
            for f in fields(cls)
            if f.name not in ("name", "rows", "cols", "cap", "x", "y")
        }
        return cls(
            name=spec.name,
            rows=spec.rows,
            cols=spec.cols,
            cap=spec.cap or 255,
            x=_axis(spec, "x_axis"),
            y=_axis(spec, "y_axis"),
            **counters,
        )


@dataclass(frozen=True)
class ServerStats:
    """The daemon's statistics (ServerStats in histograms.proto: engine, pipeline, queries,
    memory budgets, snapshots)."""

    engine: str
    histograms: int
    bytes_used: int
    batches: int
    messages: int
    samples: int
    bytes: int
    active_streams: int
    staging_buffers: int
    staging_buffers_in_flight: int
    queued_messages: int
    copy_seconds: float
    kernel_seconds: float
    apply_seconds: float
    uptime_seconds: float
    unacknowledged_messages: int
    enqueue_seconds: float
    acknowledge_seconds: float
    stage_seconds: float
    stage_wait_seconds: float
    queries: int
    query_seconds: float
    query_worker_wait_seconds: float
    query_read_seconds: float
    query_write_seconds: float
    memory_budget_bytes: int
    memory_used_bytes: int
    memory_peak_bytes: int
    memory_refusals: int
    device_memory_budget_bytes: int
    device_memory_used_bytes: int
    device_memory_refusals: int
    active_queries: int
    query_refusals: int
    snapshot_failures: int
    auth_unauthenticated: int
    auth_permission_denied: int

    @classmethod
    def from_proto(cls, stats: "histograms_pb2.ServerStats") -> "ServerStats":
        return cls(**{f.name: getattr(stats, f.name) for f in fields(cls)})


@dataclass(frozen=True)
class Cdf:
    """The CDF of a projection: ``cumulative[i]`` is the sum of bins 0..i (uint64),
    ``fraction = cumulative / total`` (all zero when total is 0)."""

    cumulative: np.ndarray
    fraction: np.ndarray
    total: int


@dataclass(frozen=True)
class Quantiles:
    """Where a projection's CDF reaches each probability: ``bin_positions`` in bins
    (0 .. bins, interpolated inside a bin) and ``axis_values`` on the axis (None without
    one)."""

    probabilities: np.ndarray
    bin_positions: np.ndarray
    axis_values: Optional[np.ndarray]
    total: int
