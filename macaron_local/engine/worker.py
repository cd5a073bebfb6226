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
from typing import Any

from macaron_local.errors import CancelledError, EngineError

INTERACTIVE = 0
BACKGROUND = 10

Job = Generator[None, None, Any]


class Stream:
    """Text pieces of one request as they are produced; ``result()`` gives the whole outcome.

    Iterating yields ``str`` pieces and ends when the request ends; an engine error is raised
    from the iteration (or from ``result()``). ``cancel()`` stops the request before its next token.
    """

    def __init__(self) -> None:
        self._events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None
        self.submitted = time.perf_counter()

    # producer side (worker thread)
    def _put_text(self, text: str) -> None:
        self._events.put(("text", text))

    def _finish(self, result: Any = None, error: BaseException | None = None) -> None:
        self._result, self._error = result, error
        self._done.set()
        self._events.put(("done", None))

    # consumer side
    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

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
                self._events.put(("done", None))  # let a second iteration end too
                if self._error is not None:
                    raise self._error
                return
            yield value

    def result(self, timeout: float | None = None) -> Any:
        if not self._done.wait(timeout):
            raise TimeoutError("the engine did not finish the request in time")
        if self._error is not None:
            raise self._error
        return self._result

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._done.is_set():
            self.cancel()


class Worker:
    """A single thread that owns llama.cpp and runs generator jobs by priority."""

    def __init__(self, name: str = "macaron-engine") -> None:
        self._heap: list[tuple[int, int, Job, Stream]] = []
        self._count = itertools.count()
        self._cv = threading.Condition()
        self._closed = False
        self._final: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def submit(self, make_job: Callable[[Stream], Job], priority: int = INTERACTIVE) -> Stream:
        stream = Stream()
        job = make_job(stream)
        with self._cv:
            if self._closed:
                raise EngineError("the engine is closed")
            heapq.heappush(self._heap, (priority, next(self._count), job, stream))
            self._cv.notify()
        return stream

    def call(self, fn: Callable[[], Any], priority: int = INTERACTIVE) -> Any:
        """Run ``fn`` on the worker thread and return its result (or raise its error)."""
        if threading.current_thread() is self._thread:
            return fn()

        def job(_: Stream) -> Job:
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

    def _step(self, priority: int, order: int, job: Job, stream: Stream) -> None:
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
