"""histd: a Python client for the histd GPU histogram daemon, numpy in and out.

    import numpy as np, histd

    client = histd.Client("127.0.0.1:7440")
    h = client.create("wafer", rows=256, cols=8192, x=(0.0, 1.0), y=(0.0, 1.0))
    h.fill(x=np.random.rand(1_000_000), y=np.random.rand(1_000_000))
    counts, xedges, yedges = h.to_numpy()      # as np.histogram2d returns them
    h.values(rows=slice(0, 128), rebin=(2, 4)) # a rebinned region, rows x cols

Every failed call raises a HistdError subclass carrying the gRPC status (``code``) and the
server's message (``details``). ``histd.aio`` has the same API for asyncio.
"""

from histd._calls import Cycle, View
from histd._channel import DEFAULT_ADDRESS, TLS
from histd._client import Client
from histd._errors import (AlreadyExistsError, CancelledError, DataLossError,
                           DeadlineExceededError, FailedPreconditionError, HistdError,
                           IngestError, InvalidArgumentError, NotFoundError,
                           PermissionDeniedError, RejectedMessage, ResourceExhaustedError,
                           UnauthenticatedError, UnavailableError)
from histd._histogram import Histogram
from histd._ingest import Producer
from histd._ingest_core import IngestCounters, IngestSummary
from histd._types import Cdf, HistogramInfo, Quantiles, ServerStats
from histd._view import Axis, Snapshot, loc, rebin

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ADDRESS", "TLS", "Client", "Histogram", "Producer", "Snapshot", "Axis",
    "HistogramInfo", "ServerStats", "Cycle", "View", "Cdf", "Quantiles", "IngestCounters", "IngestSummary",
    "RejectedMessage", "loc", "rebin",
    "HistdError", "NotFoundError", "InvalidArgumentError", "ResourceExhaustedError",
    "UnavailableError", "FailedPreconditionError", "AlreadyExistsError",
    "UnauthenticatedError", "PermissionDeniedError", "DeadlineExceededError",
    "CancelledError", "DataLossError", "IngestError",
]
