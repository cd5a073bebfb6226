"""Token accounting for the server: every hop a request causes, counted from the engine's side.

Owns :class:`MeteredEngine`, an :class:`~macaron_local.engine.Engine` that records each stream
started from a thread that opened a :meth:`MeteredEngine.meter` block. The pipeline runs the
route, the answer (and the agent's rounds) and starts the summary on the calling thread, so one
tally per request thread holds exactly that request's hops, whatever else runs concurrently.
Must not: change what the engine generates.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from macaron_local.engine import BACKGROUND, INTERACTIVE, Completion, Engine, Stream
from macaron_local.engine.engine import RequestOptions
from macaron_local.errors import MacaronError
from macaron_local.turns.route import ROUTE_SLOT

SUMMARY_WAIT_S = 120.0


class HopUsage(TypedDict):
    hop: str  # route | answer | summary
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class CachedTokens(TypedDict):
    cached_tokens: int


class Usage(TypedDict):
    """OpenAI's ``usage`` object, plus the per-hop breakdown."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: CachedTokens
    hops: list[HopUsage]
    summary_pending: bool


@dataclass
class Tally:
    """The streams one request started, classified as route / answer / summary hops."""

    hops: list[tuple[str, Stream[Completion]]] = field(default_factory=list)

    def add(self, slot: str | None, priority: int, stream: Stream[Completion]) -> None:
        self.hops.append((hop_kind(slot, priority), stream))

    def summary_streams(self) -> list[Stream[Completion]]:
        return [s for kind, s in self.hops if kind == "summary"]

    def usage(self, *, wait_summary: bool = True, timeout: float = SUMMARY_WAIT_S) -> Usage:
        """OpenAI ``usage`` summed over every hop, plus a per-hop breakdown (``hops``).

        Waits for the background summary when asked (it runs after the answer is delivered);
        a hop that failed or was cancelled counts nothing; one still running is ``pending``.
        """
        rows: list[HopUsage] = []
        pending = False
        for kind, stream in self.hops:
            done = _result(stream, timeout if (wait_summary and kind == "summary") else 0.0)
            if done is None:
                pending = pending or kind == "summary"
                continue
            rows.append(
                {
                    "hop": kind,
                    "prompt_tokens": done.n_prompt,
                    "cached_tokens": done.n_reused,
                    "completion_tokens": done.n_generated,
                }
            )
        prompt = sum(r["prompt_tokens"] for r in rows)
        completion = sum(r["completion_tokens"] for r in rows)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": sum(r["cached_tokens"] for r in rows)},
            "hops": rows,
            "summary_pending": pending,
        }


def hop_kind(slot: str | None, priority: int) -> str:
    if slot == ROUTE_SLOT:
        return "route"
    if priority >= BACKGROUND or (slot or "").startswith("summary:"):
        return "summary"
    return "answer"


def _result(stream: Stream[Completion], timeout: float) -> Completion | None:
    try:
        return stream.result(timeout)
    except TimeoutError:
        return None
    except MacaronError:
        return None  # cancelled or failed: it produced nothing the client receives


class MeteredEngine(Engine):
    """An engine whose streams are tallied per request thread (see :meth:`meter`)."""

    _meters = threading.local()

    @contextmanager
    def meter(self) -> Iterator[Tally]:
        tally = Tally()
        self._meters.tally = tally
        try:
            yield tally
        finally:
            self._meters.tally = None

    def generate(
        self, prompt: str | Sequence[int], **kw: Unpack[RequestOptions]
    ) -> Stream[Completion]:
        stream = super().generate(prompt, **kw)
        tally: Tally | None = getattr(self._meters, "tally", None)
        if tally is not None:
            tally.add(kw.get("slot"), kw.get("priority", INTERACTIVE), stream)
        return stream
