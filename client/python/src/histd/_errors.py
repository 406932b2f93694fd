"""Exceptions: every failed call raises a HistdError carrying the gRPC status.

Contract: the status code and the server's message are kept as they are (``code``,
``details``). Each status code with a common Python meaning has its own subclass that also
derives from the matching builtin (NOT_FOUND is a KeyError, INVALID_ARGUMENT a ValueError),
so ``except KeyError`` works as a numpy user expects. Client-side checks (a negative index,
a bad slice) raise plain ValueError / TypeError / IndexError before anything is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import grpc

__all__ = [
    "HistdError",
    "NotFoundError",
    "InvalidArgumentError",
    "ResourceExhaustedError",
    "UnavailableError",
    "FailedPreconditionError",
    "AlreadyExistsError",
    "UnauthenticatedError",
    "PermissionDeniedError",
    "DeadlineExceededError",
    "CancelledError",
    "DataLossError",
    "IngestError",
    "RejectedMessage",
    "error_from_code",
    "error_from_rpc",
    "status_code_from_int",
]

_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def status_code_from_int(number: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a google.rpc.Code number (UNKNOWN for an unknown number)."""
    return _BY_NUMBER.get(number, grpc.StatusCode.UNKNOWN)


class HistdError(Exception):
    """A call to histd failed. ``code`` is the grpc.StatusCode, ``details`` the server's message."""

    code: grpc.StatusCode

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return f"{self.code.name}: {self.details}"


class NotFoundError(HistdError, KeyError):
    """NOT_FOUND: no histogram of that name."""


class InvalidArgumentError(HistdError, ValueError):
    """INVALID_ARGUMENT: a field or sample the server refused."""


class ResourceExhaustedError(HistdError):
    """RESOURCE_EXHAUSTED: a server limit or memory budget, named in the message."""


class UnavailableError(HistdError, ConnectionError):
    """UNAVAILABLE: the server is unreachable or shutting down; the call may be retried."""


class FailedPreconditionError(HistdError):
    """FAILED_PRECONDITION: the server's state does not allow the call."""


class AlreadyExistsError(HistdError):
    """ALREADY_EXISTS: a histogram of that name exists."""


class UnauthenticatedError(HistdError, PermissionError):
    """UNAUTHENTICATED: no or bad credentials."""


class PermissionDeniedError(HistdError, PermissionError):
    """PERMISSION_DENIED: the caller's role may not make this call."""


class DeadlineExceededError(HistdError, TimeoutError):
    """DEADLINE_EXCEEDED: the call's timeout passed."""


class CancelledError(HistdError):
    """CANCELLED: the call was cancelled."""


class DataLossError(HistdError):
    """DATA_LOSS: damaged data (e.g. a snapshot)."""


_CLASSES = {
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.OUT_OF_RANGE: InvalidArgumentError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.DATA_LOSS: DataLossError,
}


def error_from_code(code: grpc.StatusCode, details: str) -> HistdError:
    """The HistdError subclass for ``code``."""
    return _CLASSES.get(code, HistdError)(code, details)


def error_from_rpc(error: grpc.RpcError) -> HistdError:
    """Converts a grpc.RpcError (sync or aio) into a HistdError with the same code and message."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return error_from_code(code or grpc.StatusCode.UNKNOWN, details or "")


@dataclass(frozen=True)
class RejectedMessage:
    """One ingest message the server refused (nothing of it was applied).

    ``first_sample`` is the position of the message's first sample among the samples sent
    for that histogram and sample type on the stream, so the samples ``first_sample ..
    first_sample + samples`` of the caller's input were not applied.
    """

    sequence: int
    histogram: str
    sample_type: str
    first_sample: int
    samples: int
    code: grpc.StatusCode
    details: str


class IngestError(HistdError):
    """An ingest stream reported a rejected message or broke.

    Instances also derive from the status code's class (an IngestError for NOT_FOUND is a
    NotFoundError), so ``except histd.UnavailableError`` catches a stream ended by a
    shutdown as well as a failed unary call.

    ``code`` and ``details`` are the first rejected message's status (or the stream's, when
    the stream itself failed); ``rejected`` is that message (None for a broken stream).
    ``messages_applied`` / ``samples_applied`` count what the server acknowledged OK on the
    stream up to the moment of the error; ``unacknowledged`` counts messages whose fate is
    unknown because the stream ended before their acknowledgement.
    """

    def __new__(cls, code: grpc.StatusCode, *args: object, **kwargs: object) -> "IngestError":
        if cls is IngestError and code in _CLASSES:
            cls = _ingest_class(code)
        return super().__new__(cls)

    def __init__(
        self,
        code: grpc.StatusCode,
        details: str,
        *,
        rejected: Optional[RejectedMessage] = None,
        messages_applied: int = 0,
        samples_applied: int = 0,
        messages_rejected: int = 0,
        unacknowledged: int = 0,
    ) -> None:
        super().__init__(code, details)
        self.rejected = rejected
        self.messages_applied = messages_applied
        self.samples_applied = samples_applied
        self.messages_rejected = messages_rejected
        self.unacknowledged = unacknowledged


_INGEST_CLASSES: dict = {}


def _ingest_class(code: grpc.StatusCode) -> type:
    """IngestError combined with the class of ``code`` (made once per code)."""
    if code not in _INGEST_CLASSES:
        base = _CLASSES[code]
        _INGEST_CLASSES[code] = type("IngestError", (IngestError, base),
                                     {"__module__": __name__, "__doc__": IngestError.__doc__})
    return _INGEST_CLASSES[code]
