"""The L1 agent loop: model text -> one ```repl (or ```call) block -> tool message -> again.

Owns parsing the adapter's output (the first fenced ``repl`` or ``call`` block; text with no
block is the final answer), running the block (REPL or a discrete tool call through the gate),
and the record of each step for the store's ``tool_calls`` table. It must not call the model
itself: the pipeline passes ``step(messages) -> text``.

Discrete call format (observe-before-commit tools, and the function-calling baseline)::

    ```call
    {"tool": "todos.done", "args": {"id": 7}}
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from macaron_local.agent.repl import Repl
from macaron_local.agent.tools import ToolGate

BLOCK_RE = re.compile(r"```(repl|call)[ \t]*\r?\n(.*?)(?:\r?\n)?```", re.S)
DEFAULT_MAX_STEPS = 8
CALL_RESULT_CHARS = 8000
TRUNCATED = "… [truncated]"
REPL_OFF = (
    "RuntimeError: the REPL is off on this machine ({why}). Call one tool per step instead:\n"
    '```call\n{{"tool": "module.function", "args": {{"name": "value"}}}}\n```'
)

REPEATED = (
    "(stopped: the same tool step came again instead of an answer; it ran once and "
    "returned: {result})"
)

Step = Callable[[list[dict[str, str]]], str]


def _clip(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class ToolCall:
    """One executed step, in the shape of the store's ``tool_calls`` rows."""

    step: int
    code: str
    result: str
    status: str  # ok, error, declined, timeout, crashed
    kind: str = "repl"  # repl or call


@dataclass(frozen=True)
class AgentOutcome:
    text: str  # the final answer shown to the user
    calls: list[ToolCall]
    round_trips: int  # calls of ``step`` (model generations)
    finished: bool  # False: max_steps was reached without a final answer
    messages: list[dict[str, str]] = field(default_factory=list)  # the whole episode


def extract_block(text: str) -> tuple[str, str] | None:
    """``(kind, body)`` of the first ```repl or ```call block, or None for a final answer."""
    m = BLOCK_RE.search(text)
    return (m.group(1), m.group(2)) if m else None


def fence(kind: str, body: str) -> str:
    return f"```{kind}\n{body}\n```"


def run_call(body: str, gate: ToolGate | None, limit: int = CALL_RESULT_CHARS) -> tuple[str, str]:
    """Run one ```call block; returns ``(result text, status)``."""
    try:
        req = json.loads(body)
        name, args = req["tool"], req.get("args", {})
    except (ValueError, KeyError, TypeError) as exc:
        return (f'ValueError: a call block is {{"tool": name, "args": {{...}}}} ({exc})', "error")
    if gate is None:
        return "RuntimeError: no tools in this session", "error"
    try:
        value = (
            gate.call(name, args, {}) if isinstance(args, list) else gate.call(name, (), dict(args))
        )
    except Exception as exc:  # every failure goes back to the model
        status = "declined" if "declined" in str(exc) else "error"
        return f"{type(exc).__name__}: {exc}", status
    text = "" if value is None else repr(value)
    return (text[:limit] + TRUNCATED if len(text) > limit else text), "ok"


def _status(output: str, status: str) -> str:
    if status == "error" and "the user declined to run" in output:
        return "declined"
    return status


def run_agent(
    step: Step,
    messages: list[dict[str, str]],
    repl: Repl | None,
    tools: ToolGate | None,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    repl_off: str | None = None,
) -> AgentOutcome:
    """Loop the model and the tools until a final answer or ``max_steps`` tool steps; a step
    that repeats an earlier successful one with a side effect ends the loop instead of running
    again (the small adapter can loop on a block: six identical reminders for one request)."""
    episode = [dict(m) for m in messages]
    calls: list[ToolCall] = []
    trips = 0
    while True:
        text = step(list(episode))
        trips += 1
        block = extract_block(text)
        if block is None:
            final = text.strip()
            episode.append({"role": "assistant", "content": final})
            return AgentOutcome(final, calls, trips, True, episode)
        if len(calls) >= max_steps:
            note = f"(stopped after {max_steps} tool steps without a final answer)"
            return AgentOutcome(note, calls, trips, False, episode)
        kind, body = block
        if _repeats_a_change(calls, body, tools):
            done = next(c for c in calls if c.code == body and c.status == "ok")
            note = REPEATED.format(result=_clip(done.result))  # run once, not again
            return AgentOutcome(note, calls, trips, False, episode)
        result, status = _execute(kind, body, repl, tools, repl_off)
        calls.append(ToolCall(len(calls), body, result, status, kind))
        episode.append({"role": "assistant", "content": fence(kind, body)})
        episode.append({"role": "tool", "content": result})


def _repeats_a_change(calls: list[ToolCall], body: str, tools: ToolGate | None) -> bool:
    """``body`` is a step that already succeeded in this turn and it calls a side-effecting
    tool: running it again would do the change twice."""
    if tools is None or not any(c.status == "ok" and c.code == body for c in calls):
        return False
    return any(spec.side_effect and spec.name in body for spec in tools.visible())


def _execute(
    kind: str, body: str, repl: Repl | None, tools: ToolGate | None, repl_off: str | None
) -> tuple[str, str]:
    if kind == "call":
        limit = repl.policy.output_chars if repl else CALL_RESULT_CHARS
        return run_call(body, tools, limit)
    if repl is None:
        if repl_off:
            return REPL_OFF.format(why=repl_off), "error"
        return "RuntimeError: no REPL in this session", "error"
    res = repl.run(body)
    return res.output, _status(res.output, res.status)
