"""AsyncProducer: one histd.v1.Ingest stream on grpc.aio, for code that runs an event loop.

Contract: histd.Producer's (see histd/_ingest.py), with coroutines: ``await p.fill(...)``
suspends while the window of ``window`` unacknowledged messages is full; the first rejected
message raises IngestError from the next fill/flush/wait/close; ``async with`` closes
(flush, half-close, every acknowledgement read, then the first problem not yet raised).
Acknowledgements are read by a task of the producer's own. Conversion of the samples (a
numpy pass over the input) runs on the event loop's thread.

Thread safety: one event loop; calls serialize on an asyncio.Lock.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, Optional

import grpc

from histd import _arrays
from histd._errors import IngestError, UnavailableError, error_from_code, error_from_rpc
from histd._ingest import make_progress, samples_to_pieces
from histd._ingest_core import Batcher, IngestCounters, IngestSummary, Ledger, Message

__all__ = ["AsyncProducer"]


class AsyncProducer:
    """An asyncio ingest stream; made by ``histd.aio.Client.producer()``."""

    def __init__(self, call: Any, *, max_message_bytes: int = 1 << 20, window: int = 32,
                 progress: Optional[bool] = None, total: Optional[int] = None) -> None:
        if window < 1:
            raise ValueError("window must be at least 1")
        self._call = call
        self._window = window
        self._batcher = Batcher(max_message_bytes)
        self._ledger = Ledger()
        self._cond = asyncio.Condition()
        self._write_lock = asyncio.Lock()
        self._put_lock = asyncio.Lock()
        self._half_closed = False
        self._closed = False
        self._summary: Optional[IngestSummary] = None
        self._progress = make_progress(progress, total)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _half_close(self) -> None:
        async with self._put_lock:
            if not self._half_closed:
                self._half_closed = True
                try:
                    await self._call.done_writing()
                except (grpc.RpcError, asyncio.InvalidStateError):
                    pass  # the call already ended

    async def _read(self) -> None:
        try:
            while True:
                response = await self._call.read()
                if response is grpc.aio.EOF:
                    break
                if response.server_shutting_down:
                    async with self._cond:
                        self._ledger.shutting_down = True
                        self._cond.notify_all()
                    await self._half_close()
                    continue
                async with self._cond:
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
            async with self._cond:
                self._ledger.fail(error_from_rpc(e))
        except Exception as e:  # a bug here must not leave the producer waiting forever
            async with self._cond:
                self._ledger.fail(error_from_code(grpc.StatusCode.INTERNAL,
                                                  f"reading acknowledgements: {e!r}"))
        finally:
            async with self._cond:
                self._ledger.done = True
                self._cond.notify_all()

    async def _write(self, message: Message) -> None:
        name = message.histogram.encode()
        ledger = self._ledger
        async with self._cond:
            await self._cond.wait_for(
                lambda: len(ledger.in_flight) < self._window or ledger.done
                or ledger.shutting_down or ledger.unraised is not None)
            self._raise_problem()
            if ledger.shutting_down or ledger.done:
                raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                                       "histd is shutting down; the stream is half-closed"
                                       if ledger.shutting_down else "ingest stream ended")
            sequence = ledger.start(message)
        request = _arrays.encode_ingest_request(sequence, name, message.sample_type,
                                                message.payload)
        async with self._put_lock:
            if not self._half_closed:
                try:
                    await self._call.write(request)
                    return
                except (grpc.RpcError, asyncio.InvalidStateError):
                    pass  # the stream ended; the reader task records why
        async with self._cond:
            ledger.unstart(sequence, message)
        raise UnavailableError(grpc.StatusCode.UNAVAILABLE,
                               "histd is shutting down or the stream ended")

    def _raise_problem(self) -> None:
        problem = self._ledger.take_problem()
        if problem is not None:
            raise problem

    async def fill(self, histogram: str, indices: Any = None, *, x: Any = None, y: Any = None,
                   xy: Any = None) -> None:
        """As histd.Producer.fill()."""
        sample_type, _, pieces = samples_to_pieces(indices, x, y, xy, None)
        await self.send_pieces(histogram, sample_type, pieces)

    async def send_pieces(self, histogram: str, sample_type: int,
                          pieces: Iterator[memoryview]) -> None:
        """fill() after the checks: packed payload pieces of one sample type."""
        async with self._write_lock:
            self._check_open()
            async with self._cond:
                self._raise_problem()
            for piece in pieces:
                for message in self._batcher.add(histogram, sample_type, piece):
                    await self._write(message)

    async def flush(self) -> None:
        """Writes every partial message."""
        async with self._write_lock:
            self._check_open()
            for message in self._batcher.flush():
                await self._write(message)

    async def wait(self) -> None:
        """Flushes, then waits until every written message is acknowledged; raises the first
        rejection not yet raised."""
        await self.flush()
        async with self._cond:
            await self._cond.wait_for(lambda: not self._ledger.in_flight or self._ledger.done)
            self._raise_problem()
            problem = self._ledger.unacknowledged_problem() if self._ledger.done else None
        if problem is not None:
            raise problem

    async def close(self) -> IngestSummary:
        """Flushes, half-closes, reads every acknowledgement; raises the first problem not yet
        raised."""
        async with self._write_lock:
            if self._closed:
                return self.summary()
            self._closed = True
            flush_error: Optional[BaseException] = None
            try:
                for message in self._batcher.flush():
                    await self._write(message)
            except (IngestError, UnavailableError) as e:
                flush_error = e
            await self._finish()
        async with self._cond:
            problem = self._ledger.take_problem() or self._ledger.unacknowledged_problem()
        if problem is not None:
            raise problem
        if flush_error is not None:
            raise self._with_final_counts(flush_error)
        return self.summary()

    def cancel(self) -> None:
        """Cancels the stream: messages not yet acknowledged have an unknown fate."""
        self._call.cancel()

    async def _finish(self) -> None:
        await self._half_close()
        await self._reader
        if self._progress is not None:
            self._progress.close()
        self._summary = self._ledger.summary()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the producer is closed")

    def _with_final_counts(self, error: BaseException) -> BaseException:
        if isinstance(error, IngestError) and self._summary is not None:
            c = self._summary.counters
            error.messages_applied = c.messages_acked
            error.samples_applied = c.samples_acked
            error.messages_rejected = c.messages_rejected
            error.unacknowledged = self._summary.unacknowledged
        return error

    @property
    def counters(self) -> IngestCounters:
        return IngestCounters(**vars(self._ledger.counters))

    def summary(self) -> IngestSummary:
        return self._summary if self._summary is not None else self._ledger.summary()

    async def __aenter__(self) -> "AsyncProducer":
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            await self.close()
            return
        if not issubclass(exc_type, Exception):  # CancelledError, KeyboardInterrupt
            self.cancel()
        async with self._write_lock:
            self._closed = True
            await self._finish()
        if isinstance(exc, IngestError):
            self._with_final_counts(exc)
