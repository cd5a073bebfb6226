"""The summary hop's bookkeeping on the runtime: each committed turn's summary is written
between answers (the engine's ``SUMMARY`` priority: after routes, before the next answer, so
summaries keep up with back-to-back turns instead of waiting for an idle engine), a view that
needs one waits for it, and summaries a killed run left unwritten are made at the next start, in
the background. A view waits for a summary written between answers for as long as it takes (the
next answer could not start before it anyway), and for a background one at most the profile's
``summary_wait_s`` (then a provisional note). :class:`Runtime` mixes it in; what a summary prompt
holds is ``turns/summary.py``'s.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING

from macaron_local.engine import BACKGROUND, INTERACTIVE, SUMMARY
from macaron_local.errors import MacaronError
from macaron_local.store import (
    TurnRecord,
    get_turn,
    pending_summaries,
    save_summary,
    summaries,
    tool_calls,
)
from macaron_local.turns import adapters as adapter_bindings
from macaron_local.turns.answer import visible
from macaron_local.turns.summary import checked_summary, start_summary

if TYPE_CHECKING:
    from collections.abc import Mapping

    import sqlite_utils

    from macaron_local.engine import Completion, Engine, Stream
    from macaron_local.hcp import Profile
    from macaron_local.turns.views import View

log = logging.getLogger(__name__)


class SummaryHops:
    """Background summaries of committed turns (one writer thread, one KV slot per label)."""

    engine: Engine
    profile: Profile
    bindings: dict[str, adapter_bindings.Binding]
    tools: Mapping[str, str]

    def db(self) -> sqlite_utils.Database:  # provided by Runtime
        raise NotImplementedError

    def _init_summaries(self) -> None:
        self._pending: dict[str, Future[str]] = {}
        # pending ones the engine writes before answers: their record and engine request
        self._ahead: dict[str, tuple[TurnRecord, Stream[Completion]]] = {}
        self._pending_lock = threading.Lock()
        self._summarizer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="summary")

    def _summarize_later(
        self, record: TurnRecord, view: View, binding: adapter_bindings.Binding, *, remote: bool
    ) -> None:
        """Write the turn's summary before the next answer (always locally: a remote answer
        and its view are first fitted to the local context)."""
        messages, answer = list(view.messages), record.answer
        if remote:
            messages, answer = fit_locally(self.engine, self.profile, messages, answer)
        stream = start_summary(
            self.engine,
            self.profile,
            adapter=binding.adapter,
            slot=f"summary:{record.label}",
            view=messages,
            answer=answer,
            priority=SUMMARY,
        )
        ahead = record.model_copy(update={"answer": answer})
        self._track(record.id, ahead, binding, stream, ahead=True)

    def _save_summary(
        self, record: TurnRecord, binding: adapter_bindings.Binding, stream: Stream[Completion]
    ) -> str:
        try:
            done = stream.result()
            text = self._text(done, record)
            save_summary(
                self.db(),
                record.id,
                label=record.label,
                text=text,
                n_tokens=done.n_generated,
                adapter_revision=binding.revision,
            )
            return text
        finally:
            with self._pending_lock:
                self._pending.pop(record.id, None)
                self._ahead.pop(record.id, None)

    def _text(self, done: Completion, record: TurnRecord) -> str:
        """The summary as saved: the visible text (the request's opening if none), checked."""
        return self._checked(visible(done.text) or record.request[:200], record)

    def _checked(self, text: str, record: TurnRecord) -> str:
        """An agent's summary is prose: code in it is replaced by the record's account."""
        if not self.profile.tool_patterns(record.label):
            return text
        if not record.tool_calls:
            record = record.model_copy(
                update={"tool_calls": tuple(tool_calls(self.db(), record.id))}
            )
        return checked_summary(text, record, modules=set(self.tools))

    def summary_for(self, turn: TurnRecord, timeout: float | None = None) -> str | None:
        """A turn's summary: stored, pending, or made now (a turn a killed run left without one).
        Waits at most ``timeout`` seconds for a pending or new one (then None: it goes on in the
        background); with no timeout a new one is made at interactive priority. One the engine
        writes ahead of answers is waited for whatever the timeout (the next answer could not
        start before it anyway), and read off its request: the text the writer saves."""
        with self._pending_lock:
            future = self._pending.get(turn.id)
            ahead = self._ahead.get(turn.id)
        if ahead is not None:
            record, stream = ahead
            with contextlib.suppress(MacaronError):  # an error is the writer's to report
                return self._text(stream.result(), record)
        if future is None:
            known = summaries(self.db(), [turn.id])
            if turn.id in known:
                return known[turn.id].text
            future = self._summarize_orphan(turn, urgent=timeout is None)
        try:
            return future.result(timeout)
        except FutureTimeout:
            return None

    def _summarize_orphan(self, turn: TurnRecord, *, urgent: bool) -> Future[str]:
        binding = self.bindings.get(turn.label) or adapter_bindings.Binding(
            turn.label, None, "base"
        )
        view = [
            {"role": "system", "content": self.profile.system_prompt(turn.label, self.tools)},
            {"role": "user", "content": turn.request},
        ]
        stream = start_summary(
            self.engine,
            self.profile,
            adapter=binding.adapter,
            slot=f"summary:{turn.label}",
            view=view,
            answer=turn.answer,
            priority=INTERACTIVE if urgent else BACKGROUND,
        )
        if urgent:  # on this thread: the summarizer may be busy with the ones it has queued
            done: Future[str] = Future()
            done.set_result(self._save_summary(turn, binding, stream))
            return done
        return self._track(turn.id, turn, binding, stream)

    def _track(
        self,
        turn_id: str,
        record: TurnRecord,
        binding: adapter_bindings.Binding,
        stream: Stream[Completion],
        *,
        ahead: bool = False,
    ) -> Future[str]:
        """Queue ``_save_summary`` on the writer and register it as pending (``ahead``: written
        before the next answer); the lock keeps the job from ending (and unregistering) before
        it is registered."""
        with self._pending_lock:
            future = self._summarizer.submit(self._save_summary, record, binding, stream)
            self._pending[turn_id] = future
            if ahead:
                self._ahead[turn_id] = (record, stream)
        return future

    def finish_pending(self, timeout: float | None = None) -> list[str]:
        """Wait for background summaries, then write those a previous run left undone, for at
        most ``timeout`` seconds in all (the rest is left for the next start; one summary may
        run past it). A turn that cannot be summarized (say, a label this profile lacks) is
        skipped and reported, never the end of the catch-up. Returns what was skipped."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def left() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._pending_lock:
            futures = list(self._pending.values())
        skipped: list[str] = []
        for f in futures:
            try:
                f.result(left())
            except FutureTimeout:
                return skipped  # still running: the next start writes it
            except MacaronError as exc:
                skipped.append(_skip(None, exc))
        for turn_id in pending_summaries(self.db()):
            if left() == 0.0:
                log.info("summaries left for the next start (close_wait_s reached)")
                break
            try:
                self.summary_for(get_turn(self.db(), turn_id))
            except MacaronError as exc:
                skipped.append(_skip(turn_id, exc))
        return skipped


def _skip(turn_id: str | None, exc: MacaronError) -> str:
    what = f"turn {turn_id}" if turn_id else "a turn"
    message = f"the summary of {what} was skipped: {exc}"
    log.warning("%s", message)
    return message


def fit_locally(
    engine: Engine, profile: Profile, messages: list[dict[str, str]], answer: str
) -> tuple[list[dict[str, str]], str]:
    """A remote turn's request and answer clipped (marked "[…]") so its local summary fits."""
    room = engine.n_ctx - profile.summary.max_tokens - 64
    last = dict(messages[-1])
    last["content"] = _clip(engine, last["content"], room // 4)
    return [*messages[:-1], last], _clip(engine, answer, room // 2)


def _clip(engine: Engine, text: str, limit: int) -> str:
    tokens = engine.tokenize(text)
    if len(tokens) <= max(1, limit):
        return text
    return engine.detokenize(tokens[: max(1, limit - 4)]) + " […]"
