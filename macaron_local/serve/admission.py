"""The bounded admission queue in front of the runtime.

At most ``concurrency`` requests hold a turn slot; at most ``queue`` more wait for one, in
arrival order; any request beyond that is refused at once (the server answers 429 with
Retry-After). A slot is released when the turn's thread has really finished, not when the
client went away, so the bound holds for the work the engine is doing. Runs on the event loop
thread only. Must not: know about HTTP or the runtime.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass


class QueueFull(Exception):  # a signal to the HTTP edge, not a MacaronError
    """Raised by :meth:`Admission.acquire` when every slot is busy and the queue is full."""


@dataclass
class AdmissionStats:
    active: int
    waiting: int
    peak_active: int
    peak_waiting: int
    admitted: int
    rejected: int


class Admission:
    """A FIFO semaphore with a bounded wait queue and peak counters."""

    def __init__(self, concurrency: int, queue: int) -> None:
        self.concurrency = concurrency
        self.queue = queue
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.peak_active = self.peak_waiting = self.admitted = self.rejected = 0

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        """Take a slot, waiting in line if needed; :class:`QueueFull` when the line is full."""
        if self.active < self.concurrency and not self._waiters:
            self._admit()
            return
        if len(self._waiters) >= self.queue:
            self.rejected += 1
            raise QueueFull
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self.peak_waiting = max(self.peak_waiting, len(self._waiters))
        try:
            await fut  # release() hands its slot over (active is already counted)
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot arrived as we were cancelled: pass it on
            elif fut in self._waiters:
                self._waiters.remove(fut)
            raise

    def _admit(self) -> None:
        self.active += 1
        self.admitted += 1
        self.peak_active = max(self.peak_active, self.active)

    def release(self) -> None:
        """Give a slot back: to the first live waiter, else to the pool."""
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                self.admitted += 1
                fut.set_result(None)
                return
        self.active -= 1

    def stats(self) -> AdmissionStats:
        return AdmissionStats(
            self.active,
            self.waiting,
            self.peak_active,
            self.peak_waiting,
            self.admitted,
            self.rejected,
        )
