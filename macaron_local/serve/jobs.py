"""What one API request runs on its worker thread: a conversation turn or a stateless turn.

A conversation turn is the runtime's own transactional turn (route, answer, commit, summary in
the background) on the session mapped to the ``X-Conversation-Id``; its request is the last user
message. A stateless turn routes and answers over the messages the client sent, from the chosen
specialist's system prompt, and stores nothing and starts no summary. A client-tool turn is a
stateless turn of the agent label with the client's tools in its prompt: a call it writes for
one of them ends the turn and goes back to the client (``Outcome.tool_calls``), unrun. In a
stored conversation a client-tool turn answers over the conversation's history and the exchange
since the user's message (its calls, the client's results); only its text answer is stored, as
one turn whose tool steps are the client's calls and results. All report the route as soon as
it is known and the answer's text as it streams, through ``emit``. Must not: touch HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from macaron_local.engine import Completion
from macaron_local.errors import ContextOverflowError, TurnError
from macaron_local.serve.client_tools import (
    CALL_NOTE,
    CallProblem,
    ClientCall,
    ClientTool,
    ToolChoice,
    call_grammar,
    read_call,
    tool_lines,
)
from macaron_local.serve.conversations import Conversations, session_exists
from macaron_local.serve.metered import Tally
from macaron_local.store import NewToolCall, NewTurn, TurnRecord, branch, commit_turn, get_session
from macaron_local.turns.answer import answer, room, sampling
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import RouteResult
from macaron_local.turns.summary import provisional_summary
from macaron_local.turns.turn import TurnEvents, TurnRequest
from macaron_local.turns.views import build_view

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


@dataclass(frozen=True)
class Exchange:
    """A client-tool request in a stored conversation: the user's message, what came after it
    (the agent's calls as the blocks it wrote, the client's results), the client's system text,
    and each call with its result (the turn's tool steps)."""

    request: str
    after: tuple[dict[str, str], ...] = ()
    system: tuple[str, ...] = ()
    calls: tuple[tuple[str, str], ...] = ()  # (the call block, the client's result)


@dataclass
class Outcome:
    text: str
    finish_reason: str  # OpenAI's: stop | length | tool_calls
    route: RouteInfo
    tally: Tally
    session_id: str | None = None
    turn_id: str | None = None
    backend: str = "local"  # local | remote: who wrote the answer
    failover_reason: str | None = None  # why a turn meant for the remote ran locally
    tool_calls: tuple[ClientCall, ...] = ()  # calls of the client's tools, for it to run
    steps: tuple[NewToolCall, ...] = ()  # the server's own tool calls in this turn
    call_errors: tuple[str, ...] = ()  # malformed client calls the model was told to redo


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
        session = _session(rt, conversations, conversation, cancel)
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
        steps=result.tool_calls,
    )


def _session(
    rt: Runtime, conversations: Conversations, conversation: str, cancel: threading.Event
) -> str:
    """The session of ``conversation`` (made on its first turn), unless the client left."""
    if cancel.is_set():
        raise TurnError("the client went away before the turn started; nothing was saved")
    return conversations.session_for(
        conversation,
        exists=session_exists(lambda sid: get_session(rt.db(), sid)),
        create=lambda title: rt.new_session(title).id,
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
        chat = answer_messages(rt, decision.label, messages)
        done = _generate(rt, decision.label, chat, lambda piece: emit("text", piece), cancel)
    finish = "length" if done.finish_reason == "length" else "stop"
    return Outcome(done.text.strip(), finish, info, tally)


def client_tool_turn(
    rt: Runtime,
    messages: list[dict[str, str]],
    tools: tuple[ClientTool, ...],
    choice: ToolChoice,
    *,
    decision: RouteResult,
    emit: Emit,
    cancel: threading.Event,
) -> Outcome:
    """``decision.label`` (the agent) answers over ``messages`` with the client's ``tools`` in
    its prompt (none when ``choice`` is ``none``); a call it writes for one of them is returned,
    not run. Stores nothing."""
    offered = () if choice.mode == "none" else tools
    with _meter(rt) as tally:
        info = RouteInfo.of(rt, decision)
        emit("route", info)
        chat = tool_messages(rt, decision.label, offered, messages)
        done, call, errors, held = _offer(rt, decision.label, chat, offered, choice, emit, cancel)
    if call is None:
        held.release()
        return Outcome(done.text.strip(), _finish(done), info, tally, call_errors=errors)
    return Outcome(
        held.shown.strip(), "tool_calls", info, tally, tool_calls=(call,), call_errors=errors
    )


def conversation_tool_turn(
    rt: Runtime,
    conversations: Conversations,
    conversation: str,
    exchange: Exchange,
    tools: tuple[ClientTool, ...],
    choice: ToolChoice,
    *,
    decision: RouteResult,
    emit: Emit,
    cancel: threading.Event,
) -> Outcome:
    """A client-tool turn of ``conversation``: ``decision.label`` (the agent) answers over the
    conversation's history (the view its own turns get) and ``exchange``, with the client's
    ``tools`` in its prompt. A call goes back to the client and nothing is stored; a text answer
    is committed as one turn (the user's request, the answer, each client call with its result
    as a tool step) and its summary starts in the background."""
    offered = () if choice.mode == "none" else tools
    with conversations.turn_lock(conversation), _meter(rt) as tally:
        session = _session(rt, conversations, conversation, cancel)
        info = RouteInfo.of(rt, decision)
        emit("route", info)
        db = rt.db()
        head = get_session(db, session).head_turn_id
        history = branch(db, session, head) if head else []
        chat = _conversation_chat(rt, decision.label, offered, history, exchange)
        done, call, errors, held = _offer(rt, decision.label, chat, offered, choice, emit, cancel)
        if call is not None:
            shown = held.shown.strip()
            return Outcome(
                shown, "tool_calls", info, tally, session, tool_calls=(call,), call_errors=errors
            )
        held.release()
        if not done.text.strip():
            raise TurnError(f"the {decision.label} answer was empty; nothing was saved")
        record = commit_turn(
            db,
            session,
            _client_turn(rt, decision, info, exchange, done.text.strip(), tools),
            [
                NewToolCall(step=i, label=decision.label, code=c, result=r, status="ok")
                for i, (c, r) in enumerate(exchange.calls)
            ],
            expected_head=head,
        )
    rt.summary_for(record, timeout=0)  # starts it; the reply does not wait for it
    return Outcome(
        record.answer,
        _finish(done),
        info,
        tally,
        session,
        record.id,
        steps=record.tool_calls,
        call_errors=errors,
    )


def _conversation_chat(
    rt: Runtime,
    label: str,
    offered: tuple[ClientTool, ...],
    history: list[TurnRecord],
    exchange: Exchange,
) -> list[dict[str, str]]:
    """The view ``label``'s turns get in this conversation, the client's tools as its
    ``{tools}`` (and how to call them), the client's system text, then the exchange."""
    wait = rt.profile.memory.summary_wait_s

    def summary_of(turn: TurnRecord) -> str:
        return rt.summary_for(turn, timeout=wait) or provisional_summary(turn)

    view = build_view(
        rt.profile,
        label,
        history,
        exchange.request,
        summary_of=summary_of,
        chat_tokens=rt.engine.chat_tokens,
        n_ctx=rt.engine.n_ctx,
        tools=tool_lines(offered),
        tool_messages=exchange.after,
    )
    system = view.messages[0]["content"] + ("\n\n" + CALL_NOTE if offered else "")
    first = {"role": "system", "content": "\n\n".join([system, *exchange.system])}
    return [first, *view.messages[1:]]


def _client_turn(
    rt: Runtime,
    decision: RouteResult,
    info: RouteInfo,
    exchange: Exchange,
    text: str,
    tools: tuple[ClientTool, ...],
) -> NewTurn:
    return NewTurn(
        request=exchange.request,
        answer=text,
        label=decision.label,
        route_kind=decision.kind,
        route_probs=dict(decision.probs),
        adapter_revision=info.adapter_revision,
        profile_hash=rt.profile.content_hash,
        meta={"client_tools": [t.name for t in tools]},
    )


def _offer(
    rt: Runtime,
    label: str,
    chat: list[dict[str, str]],
    offered: tuple[ClientTool, ...],
    choice: ToolChoice,
    emit: Emit,
    cancel: threading.Event,
) -> tuple[Completion, ClientCall | None, tuple[str, ...], _Held]:
    """``label`` answers ``chat`` with ``offered`` tools: its completion, the call it wrote
    (None: a text answer), the malformed calls it was told to redo, and the held-back text."""
    forced = tuple(t for t in offered if choice.mode != "function" or t.name == choice.name)
    grammar = _call_grammar(rt, forced) if choice.forced else None
    held = _Held(emit)
    ban = () if offered else tuple(rt.engine.tokenize("```")[:1])  # none: no call block
    done = _generate(rt, label, chat, held, cancel, grammar, ban)
    done, call, errors = _read(rt, label, chat, done, offered, grammar, cancel)
    return done, call, errors, held


def _finish(done: Completion) -> str:
    return "length" if done.finish_reason == "length" else "stop"


def _read(
    rt: Runtime,
    label: str,
    chat: list[dict[str, str]],
    done: Completion,
    tools: tuple[ClientTool, ...],
    grammar: str | None,
    cancel: threading.Event,
) -> tuple[Completion, ClientCall | None, tuple[str, ...]]:
    """The answer's call of a client tool (None: a text answer). A malformed one goes back to
    the model once as a tool error and the retry is held to a valid call by the tools'
    grammar; TurnError if that fails too."""
    if not tools:
        return done, None, ()
    try:
        return done, read_call(done.text, tools), ()
    except CallProblem as problem:
        chat = [
            *chat,
            {"role": "assistant", "content": done.text},
            {"role": "tool", "content": f"ValueError: {problem}"},
        ]
        redo = grammar or _call_grammar(rt, tools)
        done = _generate(rt, label, chat, lambda _: None, cancel, redo)
        return done, _checked(done.text, tools, label), (str(problem),)


def _checked(text: str, tools: tuple[ClientTool, ...], label: str) -> ClientCall:
    try:
        call = read_call(text, tools)
    except CallProblem as problem:
        raise TurnError(
            f"the {label} answer's call of a client tool is invalid: {problem}; "
            "nothing was returned to run"
        ) from problem
    if call is None:
        raise TurnError(f"the {label} answer did not call a tool after its malformed call")
    return call


def _call_grammar(rt: Runtime, tools: tuple[ClientTool, ...]) -> str:
    return call_grammar(tools, rt.engine.check_grammar)


class _Held:
    """Streams an answer's text until a call block may begin (a backtick); the rest is held
    back: it is a call for the client (``tool_calls``), or text released at the end."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.shown = ""
        self.held: list[str] | None = None

    def __call__(self, piece: str) -> None:
        if self.held is None and "`" in piece:
            cut = piece.index("`")
            piece, self.held = piece[:cut], [piece[cut:]]
        elif self.held is not None:
            self.held.append(piece)
            return
        if piece:
            self.shown += piece
            self.emit("text", piece)

    def release(self) -> None:
        if self.held:
            self.emit("text", "".join(self.held))
        self.held = None


def _generate(
    rt: Runtime,
    label: str,
    chat: list[dict[str, str]],
    on_text: Callable[[str], None],
    cancel: threading.Event,
    grammar: str | None = None,
    ban_first: tuple[int, ...] = (),
) -> Completion:
    """One answer of ``label`` over ``chat`` in the API's slot; nothing is stored."""
    tokens = rt.engine.chat_tokens(chat)
    s = rt.profile.sampling_for(label)
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
    return answer(
        rt.engine,
        tokens,
        adapter=rt.bindings[label].adapter,
        slot=f"api:{label}",
        max_tokens=budget,
        sampling=sampling(s),
        on_text=on_text,
        cancel=cancel,
        grammar=grammar,
        ban_first=ban_first,
    )


def tool_messages(
    rt: Runtime, label: str, tools: tuple[ClientTool, ...], messages: list[dict[str, str]]
) -> list[dict[str, str]]:
    """The agent's system prompt with the client's tools as its ``{tools}`` and how to call
    them, the client's system text, then the chat with its calls and tool results."""
    system = rt.profile.system_prompt(label, tool_lines(tools))
    if tools:
        system += "\n\n" + CALL_NOTE
    client_system = [m["content"] for m in messages if m["role"] in ("system", "developer")]
    chat = [m for m in messages if m["role"] in ("user", "assistant", "tool") and m["content"]]
    return [{"role": "system", "content": "\n\n".join([system, *client_system])}, *chat]


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
