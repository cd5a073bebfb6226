"""The record is the truth the agent's answer must match.

Owns :func:`truthful`: given the final text of an agent turn and the tool calls that turn made,
it returns the answer the user sees. An answer that reports an action as done ("Reminder set.",
"Added ... to your todos", "Pizza ordered.") is kept only when a tool call of this turn
succeeded and the last one did not fail; otherwise the runtime writes the reply itself from
the record: what was tried and what failed, or that nothing ran. An answer that already says
the attempt failed is kept, with the record's failure added when it does not name it. The
model may phrase things; it may not claim what the record contradicts.

It reads English phrasing (the specialists answer in English); it cannot tell a made-up fact
("it is 18 degrees in Boston") from a looked-up one when no tool ran: that is the router's and
the agent's training's job, and the reply then carries no tool result to contradict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

CLAIM = re.compile(
    r"\b(added|set|created|saved|scheduled|booked|ordered|sent|deleted|removed|updated|marked|"
    r"completed|noted|written|wrote|moved|renamed|cancel+ed|reserved|paid|purchased|bought|"
    r"posted|uploaded|played|playing|turned (on|off)|texted|emailed|messaged|called|"
    r"reminded|logged|recorded|stored|done|all set|taken care of)\b",
    re.I,
)
NOT_A_CLAIM = re.compile(  # a question, an offer, a plan or a condition reports nothing as done
    r"\?|\b(will|would|should|shall|can|could|may|might|want|wish|let me|going to|please|if|"
    r"when|whether|to (add|set|create|save|schedule|book|order|send|delete|remove|update|mark))\b",
    re.I,
)
ADMITS = re.compile(
    r"\b(could ?n[o']t|can ?n[o']t|unable|failed|fail(s|ing)?|error|did ?n[o']t|was ?n[o']t|"
    r"not able|no tool|sorry|declined|not (done|set|added|saved|run))\b",
    re.I,
)


class Call(Protocol):
    @property
    def code(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def status(self) -> str: ...


def truthful(answer: str, calls: Sequence[Call]) -> tuple[str, str | None]:
    """``(answer to show, why it was rewritten or None)`` for an agent turn's ``calls``."""
    ok = [c for c in calls if c.status == "ok"]
    last_failed = bool(calls) and calls[-1].status != "ok"
    claims, admits = _claims(answer), bool(ADMITS.search(answer))
    if not calls:
        if claims and not admits:
            return NOTHING_RAN, "claimed an action, but no tool ran in this turn"
        return answer, None
    if not last_failed:
        return answer, None
    failure = _failure(calls[-1])
    if not ok and claims and not admits:
        return f"I could not do that. {failure}", "claimed an action, but every tool call failed"
    if admits:
        if _names(answer, calls[-1]):
            return answer, None
        return f"{answer}\n\n{failure}", "the reply did not say what failed"
    if claims:  # an earlier call worked, the last one failed: say which part did not happen
        return f"{answer}\n\nBut the last step failed. {failure}", "the last tool call failed"
    return f"{answer}\n\n{failure}", "the last tool call failed"


NOTHING_RAN = (
    "I did not do that: no tool ran in this turn, so nothing was changed. "
    "Please ask again, or tell me more about what to do."
)


def _claims(text: str) -> bool:
    """Some sentence of ``text`` reports an action as done."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text)
    return any(CLAIM.search(s) and not NOT_A_CLAIM.search(s) for s in sentences)


def _failure(call: Call) -> str:
    what = _first_line(call.code, 120)
    why = _last_line(call.result, 200) or call.status
    verb = {"declined": "was declined", "timeout": "timed out"}.get(call.status, "failed")
    return f"I tried `{what}`, which {verb}: {why}"


def _names(answer: str, call: Call) -> bool:
    """The reply mentions the failing call's error (its exception name or message)."""
    why = _last_line(call.result, 200)
    head = why.split(":", 1)[0].strip()
    return bool(head) and head.lower() in answer.lower()


def _first_line(text: str, limit: int) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _last_line(text: str, limit: int) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
