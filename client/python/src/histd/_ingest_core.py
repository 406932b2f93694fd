"""The I/O-free half of an ingest stream, shared by the sync and asyncio producers.

Contract (the C++ client's, client/ingest_stream.h and sample_batcher.h):
- Batcher cuts payload pieces into messages of at most max_message_bytes (a whole number
  of samples, at least one), one partial message per (histogram, sample type); samples of a
  key leave in the order added, each message carrying first_sample (how many samples of
  that key left before it), so a rejection maps back to a position in the caller's input.
- Ledger numbers messages 1, 2, 3, ... and matches each acknowledgement to the oldest
  message in flight; an ack out of order is a protocol error. It keeps the counters, the
  rejected messages (up to max_retained), and the problems not yet raised to the caller
  (the first rejection since the last raise; the stream's failure).
- Nothing is retried or re-sent.

Thread safety: none; the producers guard a Ledger with their own lock.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Deque, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import grpc

from histd._arrays import TYPE_INDEX, TYPE_XY
from histd._errors import HistdError, IngestError, RejectedMessage, status_code_from_int

__all__ = ["Batcher", "Message", "Ledger", "IngestCounters", "IngestSummary", "type_name"]

_SAMPLE_BYTES: Dict[int, int] = {TYPE_INDEX: 4, TYPE_XY: 8}
_TYPE_NAMES: Dict[int, str] = {TYPE_INDEX: "indices", TYPE_XY: "xy"}


def type_name(sample_type: int) -> str:
    return _TYPE_NAMES.get(sample_type, str(sample_type))


class Message(NamedTuple):
    histogram: str
    sample_type: int
    first_sample: int
    samples: int
    payload: Union[bytes, bytearray, memoryview]


class Batcher:
    """Cuts payload pieces into messages (see the module's contract)."""

    def __init__(self, max_message_bytes: int) -> None:
        if max_message_bytes < 8:
            raise ValueError("max_message_bytes must be at least 8 (one x/y sample)")
        self.max_message_bytes = max_message_bytes
        self._pending: Dict[Tuple[str, int], bytearray] = {}
        self._emitted: Dict[Tuple[str, int], int] = collections.defaultdict(int)

    def _message(self, key: Tuple[str, int], payload: Union[bytearray, memoryview]) -> Message:
        samples = len(payload) // _SAMPLE_BYTES[key[1]]
        first = self._emitted[key]
        self._emitted[key] = first + samples
        return Message(key[0], key[1], first, samples, payload)

    def add(self, histogram: str, sample_type: int, piece: memoryview) -> Iterator[Message]:
        """Messages that became full by adding ``piece`` (packed samples of sample_type).
        Consume each before the next: a message may be a view of ``piece``."""
        key = (histogram, sample_type)
        size = _SAMPLE_BYTES[sample_type]
        if len(piece) % size:
            raise ValueError(f"payload of {len(piece)} bytes is not whole {size}-byte samples")
        full = max(size, self.max_message_bytes // size * size)
        pending = self._pending.pop(key, None)
        if pending is not None:
            take = min(full - len(pending), len(piece))
            pending += piece[:take]
            piece = piece[take:]
            if len(pending) < full:
                self._pending[key] = pending
                return
            yield self._message(key, pending)
        while len(piece) >= full:
            yield self._message(key, piece[:full])
            piece = piece[full:]
        if len(piece):
            self._pending[key] = bytearray(piece)

    def flush(self) -> Iterator[Message]:
        """Every partial message."""
        while self._pending:
            key, payload = self._pending.popitem()
            yield self._message(key, payload)


@dataclass
class IngestCounters:
    """What a producer sent and what the server acknowledged on its stream."""

    messages_sent: int = 0
    samples_sent: int = 0
    bytes_sent: int = 0
    messages_acked: int = 0
    samples_acked: int = 0
    messages_rejected: int = 0
    samples_rejected: int = 0

    @property
    def messages_in_flight(self) -> int:
        return self.messages_sent - self.messages_acked - self.messages_rejected


@dataclass(frozen=True)
class IngestSummary:
    """A closed stream: its counters, every rejected message kept (in order), how many
    rejections were not kept, and how many messages were never acknowledged."""

    counters: IngestCounters
    rejected: Tuple[RejectedMessage, ...]
    rejected_not_retained: int
    unacknowledged: int


class _InFlight(NamedTuple):
    sequence: int
    histogram: str
    sample_type: int
    first_sample: int
    samples: int


class Ledger:
    """Sequence numbers, the in-flight window, counters and problems of one stream."""

    def __init__(self, max_retained: int = 1000) -> None:
        self.next_sequence = 1
        self.in_flight: Deque[_InFlight] = collections.deque()
        self.counters = IngestCounters()
        self.rejected: List[RejectedMessage] = []
        self.rejected_not_retained = 0
        self.max_retained = max_retained
        self.unraised: Optional[RejectedMessage] = None
        self.stream_error: Optional[HistdError] = None
        self.done = False  # no more acks will come
        self.shutting_down = False  # the server's shutdown notice arrived

    def start(self, message: Message) -> int:
        """Records a message about to be written; returns its sequence number."""
        sequence = self.next_sequence
        self.next_sequence += 1
        self.in_flight.append(_InFlight(sequence, message.histogram, message.sample_type,
                                        message.first_sample, message.samples))
        self.counters.messages_sent += 1
        self.counters.samples_sent += message.samples
        self.counters.bytes_sent += len(message.payload)
        return sequence

    def unstart(self, sequence: int, message: Message) -> None:
        """Forgets a message that was never written (the stream was half-closed)."""
        if self.in_flight and self.in_flight[-1].sequence == sequence:
            self.in_flight.pop()
            self.next_sequence -= 1
            self.counters.messages_sent -= 1
            self.counters.samples_sent -= message.samples
            self.counters.bytes_sent -= len(message.payload)

    def ack(self, sequence: int, code: int, details: str) -> Tuple[int, Optional[str]]:
        """Matches one acknowledgement; returns (samples it covered, protocol violation)."""
        if not self.in_flight:
            return 0, f"server acknowledged sequence {sequence} with no message in flight"
        oldest = self.in_flight[0]
        if oldest.sequence != sequence:
            return 0, (f"server acknowledged sequence {sequence} but the oldest message in "
                       f"flight is {oldest.sequence}")
        self.in_flight.popleft()
        if code == 0:
            self.counters.messages_acked += 1
            self.counters.samples_acked += oldest.samples
            return oldest.samples, None
        self.counters.messages_rejected += 1
        self.counters.samples_rejected += oldest.samples
        rejected = RejectedMessage(oldest.sequence, oldest.histogram,
                                   type_name(oldest.sample_type), oldest.first_sample,
                                   oldest.samples, status_code_from_int(code), details)
        if len(self.rejected) < self.max_retained:
            self.rejected.append(rejected)
        else:
            self.rejected_not_retained += 1
        if self.unraised is None:
            self.unraised = rejected
        return oldest.samples, None

    def fail(self, error: HistdError) -> None:
        if self.stream_error is None:
            self.stream_error = error

    def take_problem(self) -> Optional[IngestError]:
        """The first rejection not yet raised, else the stream's failure, as an IngestError
        (the rejection is then considered raised)."""
        c = self.counters
        if self.unraised is not None:
            r = self.unraised
            self.unraised = None
            return IngestError(
                r.code,
                f"message {r.sequence} for histogram '{r.histogram}' ({r.sample_type}, "
                f"samples {r.first_sample}..{r.first_sample + r.samples}) rejected: {r.details}",
                rejected=r, messages_applied=c.messages_acked, samples_applied=c.samples_acked,
                messages_rejected=c.messages_rejected, unacknowledged=len(self.in_flight))
        if self.stream_error is not None:
            e = self.stream_error
            return IngestError(e.code, f"ingest stream failed: {e.details}",
                               messages_applied=c.messages_acked,
                               samples_applied=c.samples_acked,
                               messages_rejected=c.messages_rejected,
                               unacknowledged=len(self.in_flight))
        return None

    def unacknowledged_problem(self) -> Optional[IngestError]:
        """After the stream ended: messages whose ack never came."""
        if not self.in_flight:
            return None
        c = self.counters
        return IngestError(grpc.StatusCode.UNAVAILABLE,
                           f"{len(self.in_flight)} messages were never acknowledged",
                           messages_applied=c.messages_acked, samples_applied=c.samples_acked,
                           messages_rejected=c.messages_rejected,
                           unacknowledged=len(self.in_flight))

    def summary(self) -> IngestSummary:
        return IngestSummary(IngestCounters(**vars(self.counters)), tuple(self.rejected),
                             self.rejected_not_retained, len(self.in_flight))
