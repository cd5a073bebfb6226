"""What one API request runs on its worker thread: a conversation turn or a stateless turn.

A conversation turn is the runtime's own transactional turn (route, answer, commit, summary in
the background) on the session mapped to the ``X-Conversation-Id``; its request is the last user
message. A stateless turn routes and answers over the messages the client sent, from the chosen
specialist's system prompt, and stores nothing and starts no summary. Both report the route as
soon as it is known and the answer's text as it streams, through ``emit``. Must not: touch HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from macaron_local.engine import Sampling, Stream
from macaron_local.errors import ContextOverflowError, TurnError
from macaron_local.serve.conversations import Conversations, session_exists
from macaron_local.serve.metered import Tally
from macaron_local.store import get_session
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import RouteResult

Emit = Callable[[str, Any], None]  # ("route", RouteInfo) | ("text", str) | ("notice", Notice)


@dataclass(frozen=True)
class RouteInfo:
    """The extension data every response carries (``"macaron"`` field)."""

    label: str
    route: str  # auto | manual | sticky | fallback
    probs: dict[str, float]
    adapter_revision: str
    route_error: str | None = None

    @classmethod
    def of(cls, rt: Runtime, decision: RouteResult) -> RouteInfo:
        binding = rt.bindings.get(decision.label)
        return cls(
            decision.label,
            decision.kind,
            dict(decision.probs),
            binding.revision if binding else "base",
            decision.error,
        )


@dataclass
class Outcome:
    text: str
    finish_reason: str  # OpenAI's: stop | length
    route: RouteInfo
    tally: Tally
    session_id: str | None = None
    turn_id: str | None = None
    backend: str = "local"  # local | remote: who wrote the answer
    failover_reason: str | None = None  # why a turn meant for the remote ran locally


def conversation_turn(
    rt: Runtime,
    conversations: Conversations,
    conversation: str,
    request: str,
    *,
    label: str | None,
    emit: Emit,
    cancel: threading.Event,
) -> Outcome:
    """One stored turn of ``conversation``; its turns run one at a time."""
    with conversations.turn_lock(conversation), _meter(rt) as tally:
        if cancel.is_set():
            raise TurnError("the client went away before the turn started; nothing was saved")
        session = conversations.session_for(
            conversation,
            exists=session_exists(lambda sid: get_session(rt.db(), sid)),
            create=lambda title: rt.new_session(title).id,
        )
        routed: list[RouteInfo] = []

        def on_route(decision: RouteResult) -> None:
            routed.append(RouteInfo.of(rt, decision))
            emit("route", routed[-1])

        result = rt.run_turn(
            session,
            request,
            label=label,
            on_route=on_route,
            on_text=lambda piece: emit("text", piece),
            cancel=cancel,
            on_notice=lambda notice: emit("notice", notice),
        )
    finish = "length" if result.meta.get("finish") == "length" else "stop"
    return Outcome(
        result.answer,
        finish,
        routed[-1],
        tally,
        result.session,
        result.turn,
        result.backend,
        result.failover_reason,
    )


def stateless_turn(
    rt: Runtime,
    messages: list[dict[str, str]],
    *,
    label: str | None,
    emit: Emit,
    cancel: threading.Event,
) -> Outcome:
    """Route the last user message and answer over ``messages``; nothing is stored."""
    with _meter(rt) as tally:
        request = messages[-1]["content"]
        decision = RouteResult(label, "manual") if label else rt.route(request)
        info = RouteInfo.of(rt, decision)
        emit("route", info)
        binding = rt.bindings[decision.label]
        prompt = rt.engine.render_chat(answer_messages(rt, decision.label, messages))
        s = rt.profile.sampling_for(decision.label)
        room = rt.engine.n_ctx - rt.engine.count_tokens(prompt)
        if room < 16:
            raise ContextOverflowError(
                f"the messages need {rt.engine.n_ctx - room} tokens; the context holds "
                f"{rt.engine.n_ctx} with room for the answer",
                n_tokens=rt.engine.n_ctx - room,
                limit=rt.engine.n_ctx,
                hint="send fewer messages, or use X-Conversation-Id (the server keeps the history "
                "and summarizes it)",
            )
        stream = rt.engine.generate(
            prompt,
            adapter=binding.adapter,
            slot=f"api:{decision.label}",
            max_tokens=min(s.max_tokens or 512, room),
            sampling=to_sampling(s),
        )
        with _forward_cancel(cancel, stream):
            for piece in stream:
                emit("text", piece)
            done = stream.result()
    finish = "length" if done.finish_reason == "length" else "stop"
    return Outcome(done.text.strip(), finish, info, tally)


def answer_messages(
    rt: Runtime, label: str, messages: list[dict[str, str]]
) -> list[dict[str, str]]:
    """The specialist's system prompt (plus the client's own system text), then the chat."""
    client_system = [m["content"] for m in messages if m["role"] in ("system", "developer")]
    system = "\n\n".join([rt.profile.system_prompt(label, rt.tools), *client_system])
    chat = [m for m in messages if m["role"] in ("user", "assistant") and m["content"]]
    return [{"role": "system", "content": system}, *chat]


def to_sampling(s: Any) -> Sampling:
    """An HCP ``SamplingParams`` (fields may be unset) -> the engine's Sampling."""
    base = Sampling()
    values = {
        name: getattr(s, name)
        for name in ("temperature", "top_k", "top_p", "min_p", "repeat_penalty", "seed")
        if getattr(s, name, None) is not None
    }
    return Sampling(**{**base.__dict__, **values})


@contextmanager
def _meter(rt: Runtime) -> Iterator[Tally]:
    meter = getattr(rt.engine, "meter", None)
    if meter is None:  # a plain engine: nothing is counted
        yield Tally()
        return
    with meter() as tally:
        yield tally


@contextmanager
def _forward_cancel(cancel: threading.Event, stream: Stream) -> Iterator[None]:
    """Cancel ``stream`` as soon as ``cancel`` is set (also while it waits for the engine)."""
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if cancel.wait(0.05):
                stream.cancel()
                return

    threading.Thread(target=watch, daemon=True, name="serve-cancel").start()
    try:
        yield
    finally:
        done.set()
