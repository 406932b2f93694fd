"""Producer: one long-lived histd.v1.Ingest stream (blocking API).

Contract (as client/ingest_stream.h, the C++ client):
- fill() checks and converts the whole input first (a ValueError/TypeError sends nothing),
  then cuts it into messages of at most max_message_bytes per (histogram, sample type) and
  writes every full one; flush() writes the partial ones. At most ``window`` messages are
  written and unacknowledged; fill() blocks while the window is full.
- Every message gets exactly one acknowledgement, in order. The first rejected message
  (nothing of it applied) is raised as an IngestError, carrying its status and message, by
  the next fill()/flush()/wait()/close() (fill() stops sending as soon as it sees one).
  A rejection is raised once; every rejection is kept in summary().rejected.
- Server shutdown notice: the stream half-closes, and fill() raises UNAVAILABLE from then on;
  messages that crossed the notice are acknowledged UNAVAILABLE.
- close() (and leaving the ``with`` block) flushes, half-closes, reads every
  acknowledgement, then raises the first problem not yet raised: a rejection, the stream's
  failure, or messages never acknowledged. Nothing is retried or re-sent, ever.
- Progress: with ``progress=True`` (or None while stderr is a terminal) and tqdm installed,
  a tqdm bar counts acknowledged samples.

Thread safety: fill/flush/wait/close serialize on an internal lock; acknowledgements are
read on a thread of the producer's own ("histd-ingest-acks").
"""

from __future__ import annotations

import queue
import sys
import threading
from typing import Any, Callable, Iterator, Optional, Tuple

import grpc
import numpy as np

from histd import _arrays
from histd._errors import IngestError, UnavailableError, error_from_code, error_from_rpc
from histd._ingest_core import Batcher, IngestCounters, IngestSummary, Ledger, Message

__all__ = ["Producer", "samples_to_pieces", "make_progress"]

# Samples converted at a time when the input is not already packed uint32 / float32 pairs.
CONVERT_CHUNK = 1 << 20


def samples_to_pieces(indices: Any, x: Any, y: Any, xy: Any, limit: Optional[int],
                      chunk: int = CONVERT_CHUNK) -> Tuple[int, int, Iterator[memoryview]]:
    """Checks one fill's input and returns (sample type, samples, payload pieces)."""
    given = [v is not None for v in (indices, x, y, xy)]
    if given == [True, False, False, False]:
        a = _arrays.check_indices(indices, limit)
        return _arrays.TYPE_INDEX, int(a.size), _arrays.index_chunks(a, chunk)
    if given == [False, True, True, False]:
        xs, ys = _arrays.check_xy(x, y)
        return _arrays.TYPE_XY, int(xs.size), _arrays.xy_chunks(xs, ys, chunk)
    if given == [False, False, False, True]:
        a = np.asarray(xy)
        if a.dtype.kind not in "iuf":
            raise TypeError(f"xy: want an integer or float array, got dtype {a.dtype}")
        if a.ndim != 2 or a.shape[1] != 2:
            raise ValueError(f"xy: want shape (n, 2), got {a.shape}")
        return _arrays.TYPE_XY, int(a.shape[0]), _arrays.xy_pairs_chunks(a, chunk)
    raise TypeError("fill: pass indices, or x= and y=, or xy= (an (n, 2) array)")


def make_progress(progress: Optional[bool], total: Optional[int]) -> Any:
    """A tqdm bar counting samples, or None (progress off, or tqdm not installed)."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="samples", unit_scale=True, desc="histd ingest")


class Producer:
    """A blocking ingest stream; see the module's contract. Made by Client.producer()."""

    def __init__(self, open_stream: Callable[[Iterator[bytes]], Any], *,
                 max_message_bytes: int = 1 << 20, window: int = 32,
                 progress: Optional[bool] = None, total: Optional[int] = None) -> None:
        if window < 1:
            raise ValueError("window must be at least 1")
        self._window = window
        self._batcher = Batcher(max_message_bytes)
        self._ledger = Ledger()
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # one producer call at a time
        self._put_lock = threading.Lock()  # queue puts vs the half-close
        self._half_closed = False
        self._closed = False
        self._summary: Optional[IngestSummary] = None
        self._queue: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()
        self._progress = make_progress(progress, total)
        self._call = open_stream(self._requests())
        self._reader = threading.Thread(target=self._read, name="histd-ingest-acks",
                                        daemon=True)
        self._reader.start()

    # -- the stream's two sides ------------------------------------------------------------

    def _requests(self) -> Iterator[bytes]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            yield item

    def _half_close(self) -> None:
        with self._put_lock:
            if not self._half_closed:
                self._half_closed = True
                self._queue.put(None)

    def _read(self) -> None:
        try:
            for response in self._call:
                if response.server_shutting_down:
                    with self._cond:
                        self._ledger.shutting_down = True
                        self._cond.notify_all()
                    self._half_close()
                    continue
                with self._cond:
                    samples, violation = self._ledger.ack(response.sequence, response.code,
                                                          response.message)
                    if violation:
                        self._ledger.fail(error_from_code(grpc.StatusCode.INTERNAL, violation))
                    self._cond.notify_all()
                if violation:
                    self._call.cancel()
                    break
                if self._progress is not None:
                    self._progress.update(samples)
        except grpc.RpcError as e:
            with self._cond:
                self._ledger.fail(error_from_rpc(e))
        except Exception as e:  # a bug here must not leave the producer waiting forever
            with self._cond:
                self._ledger.fail(error_from_code(grpc.StatusCode.INTERNAL,
                                                  f"reading acknowledgements: {e!r}"))
        finally:
            self._half_close()
            with self._cond:
                self._ledger.done = True
                self._cond.notify_all()

    def _write(self, message: Message) -> None:
        name = message.histogram.encode()
        with self._cond:
            ledger = self._ledger
            self._cond.wait_for(lambda: len(ledger.in_flight) < self._window or ledger.done
                                or ledger.shutting_down or ledger.unraised is not None)
            self._raise_problem()
            if ledger.shutting_down or ledger.done:
                raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                                       "histd is shutting down; the stream is half-closed"
                                       if ledger.shutting_down else "ingest stream ended")
            sequence = ledger.start(message)
        request = _arrays.encode_ingest_request(sequence, name, message.sample_type,
                                                message.payload)
        with self._put_lock:
            if not self._half_closed:
                self._queue.put(request)
                return
        with self._cond:
            ledger.unstart(sequence, message)
        raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                               "histd is shutting down; the stream is half-closed")

    def _raise_problem(self) -> None:
        problem = self._ledger.take_problem()
        if problem is not None:
            raise problem

    # -- public API --------------------------------------------------------------------------

    def fill(self, histogram: str, indices: Any = None, *, x: Any = None, y: Any = None,
             xy: Any = None) -> None:
        """Sends flat bin indices (``indices``) or coordinates (``x=`` and ``y=``, or an (n, 2)
        ``xy=``) for ``histogram``; returns once every full message is written (the last
        partial one waits for more samples, flush() or close()). Indices are checked against
        2**32 only: the daemon rejects those beyond the histogram's bins (IngestError,
        INVALID_ARGUMENT). An IngestError raised here leaves the rest of this call's samples
        unsent."""
        sample_type, _, pieces = samples_to_pieces(indices, x, y, xy, None)
        self.send_pieces(histogram, sample_type, pieces)

    def send_pieces(self, histogram: str, sample_type: int, pieces: Iterator[memoryview]) -> None:
        """fill() after the checks: packed payload pieces of one sample type."""
        with self._write_lock:
            self._check_open()
            with self._cond:
                self._raise_problem()
            for piece in pieces:
                for message in self._batcher.add(histogram, sample_type, piece):
                    self._write(message)

    def flush(self) -> None:
        """Writes every partial message."""
        with self._write_lock:
            self._check_open()
            for message in self._batcher.flush():
                self._write(message)

    def wait(self) -> None:
        """Flushes, then blocks until every written message is acknowledged; raises the first
        rejection not yet raised."""
        self.flush()
        with self._cond:
            self._cond.wait_for(lambda: not self._ledger.in_flight or self._ledger.done)
            self._raise_problem()
            problem = self._ledger.unacknowledged_problem() if self._ledger.done else None
        if problem is not None:
            raise problem

    def close(self) -> IngestSummary:
        """Flushes, half-closes, reads every acknowledgement; raises the first problem not yet
        raised. Returns the summary (also afterwards from summary())."""
        with self._write_lock:
            if self._closed:
                return self.summary()
            self._closed = True
            flush_error: Optional[BaseException] = None
            try:
                for message in self._batcher.flush():
                    self._write(message)
            except (IngestError, UnavailableError) as e:
                flush_error = e
            self._finish()
        with self._cond:
            problem = self._ledger.take_problem() or self._ledger.unacknowledged_problem()
        if problem is not None:
            raise problem
        if flush_error is not None:
            raise self._with_final_counts(flush_error)
        return self.summary()

    def cancel(self) -> None:
        """Cancels the stream: messages not yet acknowledged have an unknown fate."""
        self._call.cancel()

    def _finish(self) -> None:
        self._half_close()
        self._reader.join()
        if self._progress is not None:
            self._progress.close()
        with self._cond:
            self._summary = self._ledger.summary()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the producer is closed")

    @property
    def counters(self) -> IngestCounters:
        """A copy of the stream's counters now."""
        with self._cond:
            return IngestCounters(**vars(self._ledger.counters))

    def summary(self) -> IngestSummary:
        """The counters and rejected messages (final once closed)."""
        if self._summary is not None:
            return self._summary
        with self._cond:
            return self._ledger.summary()

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
            return
        if not issubclass(exc_type, Exception):  # KeyboardInterrupt and the like
            self.cancel()
        with self._write_lock:
            self._closed = True
            self._finish()
        if isinstance(exc, IngestError):
            self._with_final_counts(exc)

    def _with_final_counts(self, error: BaseException) -> BaseException:
        """Updates an IngestError's counts to the stream's final ones."""
        if isinstance(error, IngestError) and self._summary is not None:
            c = self._summary.counters
            error.messages_applied = c.messages_acked
            error.samples_applied = c.samples_acked
            error.messages_rejected = c.messages_rejected
            error.unacknowledged = self._summary.unacknowledged
        return error

