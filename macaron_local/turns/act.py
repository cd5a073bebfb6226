"""The answer hop for specialists that act (L1): model -> REPL block -> tool result -> model.

Owns the step function the agent loop calls (render the view plus the tool messages so far,
then the answer step, :func:`~macaron_local.turns.answer.answer`, with the label's adapter in
its own KV slot) and the aggregation of
the steps into one answer with its tool calls, whose final text must match the record
(:func:`~macaron_local.agent.truth.truthful`: no claimed action without a tool call that did
it). The agent session (REPL, gate) comes from the runtime; nothing here writes to the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from macaron_local.agent.session import AgentSession
from macaron_local.agent.truth import truthful
from macaron_local.engine import Completion, Engine, Sampling
from macaron_local.errors import CancelledError
from macaron_local.store import NewToolCall
from macaron_local.turns.answer import answer


@dataclass
class ActOutcome:
    completion: Completion  # the totals over all steps (text = the final answer)
    tool_calls: list[NewToolCall] = field(default_factory=list)
    round_trips: int = 0
    finished: bool = True
    rewritten: str | None = None  # why the runtime rewrote the model's final text, if it did


def act(
    engine: Engine,
    agent: AgentSession,
    messages: list[dict[str, str]],
    *,
    label: str,
    adapter: str | None,
    slot: str,
    max_tokens: int,
    sampling: Sampling,
    on_text: Callable[[str], None] | None,
    cancel: threading.Event | None,
    max_steps: int = 6,
) -> ActOutcome:
    total = Completion()

    def step(msgs: list[dict[str, str]]) -> str:
        if cancel is not None and cancel.is_set():
            raise CancelledError("the request was cancelled")
        tokens = engine.chat_tokens(msgs)
        budget = max(16, min(max_tokens, engine.n_ctx - len(tokens)))
        done = answer(
            engine,
            tokens,
            adapter=adapter,
            slot=slot,
            max_tokens=budget,
            sampling=sampling,
            on_text=on_text,
            cancel=cancel,
        )
        _accumulate(total, done)
        if on_text:
            on_text("\n")
        return done.text

    outcome = agent.run(step, messages, max_steps=max_steps)
    request = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    tools = agent.gate.visible()
    total.text, rewritten = truthful(  # the record decides
        outcome.text,
        outcome.calls,
        request=request,
        tools=[s.name for s in tools],
        acting=[s.name for s in tools if s.side_effect],
    )
    calls = [
        NewToolCall(step=c.step, label=label, code=c.code, result=c.result, status=c.status)
        for c in outcome.calls
    ]
    return ActOutcome(total, calls, outcome.round_trips, outcome.finished, rewritten)


def _accumulate(total: Completion, done: Completion) -> None:
    if not total.tokens and not total.n_prompt:
        total.ttft_s, total.queue_s = done.ttft_s, done.queue_s
    total.tokens += done.tokens
    total.n_prompt += done.n_prompt
    total.n_reused += done.n_reused
    total.n_evaluated += done.n_evaluated
    total.total_s += done.total_s
    total.finish_reason = done.finish_reason
