"""The one thread that runs llama.cpp, and the streams that carry its output out.

Owns scheduling: jobs are generators that yield between tokens, queued by priority. After every
step the worker checks whether a more urgent job is waiting (an interactive answer while a
background summary runs) and, if so, parks the current job and runs the urgent one first. A
parked job resumes later from where it stopped; its KV stays in its own slot. Cancellation is
checked between tokens.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any, Generic, TypeVar, cast

from macaron_local.errors import CancelledError, EngineError

ROUTE = -10  # a route decides where a turn goes: it runs between an answer's tokens
SUMMARY = -5  # a committed turn's summary: after routes, before the next answer (it keeps up)
INTERACTIVE = 0
BACKGROUND = 10

T = TypeVar("T")

# A job is a generator the worker steps through; it returns the request's result at its end.
Job = Generator[None, None, T]


class Stream(Generic[T]):
    """Text pieces of one request as they are produced; ``result()`` gives the whole outcome.

    Iterating yields ``str`` pieces and ends when the request ends; an engine error is raised
    from the iteration (or from ``result()``). ``cancel()`` stops the request before its next token.
    """

    def __init__(self) -> None:
        self._events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._cancel = threading.Event()
        self._caller_cancel: threading.Event | None = None  # the caller's own, when it has one
        self._done = threading.Event()
        self._result: T | None = None
        self._error: BaseException | None = None
        self.submitted = time.perf_counter()

    # producer side (worker thread)
    def _put_text(self, text: str) -> None:
        self._events.put(("text", text))

    def _finish(self, result: T | None = None, error: BaseException | None = None) -> None:
        self._result, self._error = result, error
        self._done.set()
        self._events.put(("done", ""))

    # consumer side
    @property
    def cancelled(self) -> bool:
        caller = self._caller_cancel
        return self._cancel.is_set() or (caller is not None and caller.is_set())

    def cancel_on(self, event: threading.Event | None) -> None:
        """Also end when the caller's ``event`` is set (checked where ``cancel()`` is)."""
        self._caller_cancel = event

    @property
    def done(self) -> bool:
        """The request has ended (finished, failed or cancelled)."""
        return self._done.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def __iter__(self) -> Iterator[str]:
        while True:
            kind, value = self._events.get()
            if kind == "done":
                self._events.put(("done", ""))  # let a second iteration end too
                if self._error is not None:
                    raise self._error
                return
            yield value

    def result(self, timeout: float | None = None) -> T:
        if not self._done.wait(timeout):
            raise TimeoutError("the engine did not finish the request in time")
        if self._error is not None:
            raise self._error
        return cast(T, self._result)  # _finish() set it, and no error: the job's own value

    def __enter__(self) -> Stream[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._done.is_set():
            self.cancel()


class Worker:
    """A single thread that owns llama.cpp and runs generator jobs by priority."""

    def __init__(self, name: str = "macaron-engine") -> None:
        # jobs of every kind share one queue, so their results are of any type
        self._heap: list[tuple[int, int, Job[Any], Stream[Any]]] = []
        self._count = itertools.count()
        self._cv = threading.Condition()
        self._closed = False
        self._final: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def submit(
        self, make_job: Callable[[Stream[T]], Job[T]], priority: int = INTERACTIVE
    ) -> Stream[T]:
        stream: Stream[T] = Stream()
        job = make_job(stream)
        with self._cv:
            if self._closed:
                raise EngineError("the engine is closed")
            heapq.heappush(self._heap, (priority, next(self._count), job, stream))
            self._cv.notify()
        return stream

    def call(self, fn: Callable[[], T], priority: int = INTERACTIVE) -> T:
        """Run ``fn`` on the worker thread and return its result (or raise its error)."""
        if threading.current_thread() is self._thread:
            return fn()

        def job(_: Stream[T]) -> Job[T]:
            return fn()
            yield  # pragma: no cover - makes this a generator

        return self.submit(job, priority).result()

    def _urgent_waiting(self, priority: int) -> bool:
        with self._cv:
            return bool(self._heap) and self._heap[0][0] < priority

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._cv.wait()
                if self._closed:
                    dropped, self._heap = self._heap, []
                    break
                priority, order, job, stream = heapq.heappop(self._heap)
            self._step(priority, order, job, stream)
        for _, _, job, stream in dropped:  # their cleanup runs while llama.cpp is still alive
            with contextlib.suppress(Exception):  # one failing cleanup must not skip the free
                job.close()
            stream._finish(error=CancelledError("the engine closed before this finished"))
        if self._final is not None:
            self._final()

    def _step(self, priority: int, order: int, job: Job[Any], stream: Stream[Any]) -> None:
        try:
            while True:
                next(job)
                if self._closed or self._urgent_waiting(priority):
                    with self._cv:  # park: keep its place among equals
                        heapq.heappush(self._heap, (priority, order, job, stream))
                    return
        except StopIteration as stop:
            stream._finish(result=stop.value)
        except BaseException as exc:  # delivered to the caller, never kills the worker
            stream._finish(error=exc)

    def close(self, timeout: float = 30.0, final: Callable[[], None] | None = None) -> None:
        """Stop: no new jobs; the running one stops at its next step, and it and the queued
        ones end cancelled (their generators closed on this thread). Then ``final`` runs on the
        worker thread as its very last act: the engine frees llama.cpp there, so no job can
        touch a freed context (a parked warm-up resumed after the free segfaulted)."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            self._final = final
            for _, _, _, stream in self._heap:
                stream.cancel()
            self._cv.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
