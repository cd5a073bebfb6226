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
from typing import TYPE_CHECKING, Any

from macaron_local.errors import ContextOverflowError, TurnError
from macaron_local.serve.conversations import Conversations, session_exists
from macaron_local.serve.metered import Tally
from macaron_local.store import get_session
from macaron_local.turns.answer import answer, room, sampling
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import RouteResult
from macaron_local.turns.turn import TurnEvents, TurnRequest

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn

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
    confirm: ConfirmFn | None = None,
) -> Outcome:
    """One stored turn of ``conversation``; its turns run one at a time. ``confirm`` answers
    for the turn's side-effecting tool calls (None: declined, nobody is there to ask)."""
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

        events = TurnEvents(
            on_route=on_route,
            on_text=lambda piece: emit("text", piece),
            on_notice=lambda notice: emit("notice", notice),
            confirm=confirm or _declined,
            cancel=cancel,
        )
        result = rt.run_turn(TurnRequest(session, request, label=label), events)
    finish = "length" if result.meta.get("finish") == "length" else "stop"
    return Outcome(
        result.answer,
        finish,
        routed[-1],
        tally,
        result.session_id,
        result.id,
        result.backend,
        result.failover_reason,
    )


def _declined(tool: str, args: dict[str, Any]) -> bool:
    """A server turn has nobody to ask: a side-effecting call is declined (never the app's
    dialog, which may be open on the same runtime in another process' terminal)."""
    return False


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
        tokens = rt.engine.chat_tokens(answer_messages(rt, decision.label, messages))
        s = rt.profile.sampling_for(decision.label)
        try:
            budget = room(rt.engine, len(tokens), s.max_tokens)
        except ContextOverflowError as exc:
            raise ContextOverflowError(
                str(exc),
                n_tokens=exc.n_tokens,
                limit=exc.limit,
                hint="send fewer messages, or use X-Conversation-Id (the server keeps the history "
                "and summarizes it)",
            ) from exc
        done = answer(
            rt.engine,
            tokens,
            adapter=binding.adapter,
            slot=f"api:{decision.label}",
            max_tokens=budget,
            sampling=sampling(s),
            on_text=lambda piece: emit("text", piece),
            cancel=cancel,
        )
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


@contextmanager
def _meter(rt: Runtime) -> Iterator[Tally]:
    meter = getattr(rt.engine, "meter", None)
    if meter is None:  # a plain engine: nothing is counted
        yield Tally()
        return
    with meter() as tally:
        yield tally
