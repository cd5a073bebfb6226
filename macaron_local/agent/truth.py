"""The record is the truth the agent's answer must match.

Owns :func:`truthful`: given the final text of an agent turn and the tool calls that turn made,
it returns the answer the user sees. An answer that reports an action as done ("Reminder set.",
"Added ... to your todos", "Pizza ordered.") is kept only when a tool call of this turn
succeeded and the last one did not fail; otherwise the runtime writes the reply itself from
the record: what was tried and what failed, or that nothing ran. An answer that reports live
data (weather, prices, an order's or a flight's status) is kept only when a tool call of this
turn succeeded: with none behind it, the data was made up. A reply the runtime writes for a
request no installed tool covers says which tool it would need, that none is installed and
which kind of plugin would add it (``missing.py``). An answer that already says the attempt
failed is kept, with the record's failure added when it does not name it (and the missing
tool and its plugin when it names neither). The model may phrase things; it may not claim what
the record contradicts.

It reads English phrasing (the specialists answer in English). Once a tool call succeeded it
does not judge whether that call is the one behind a reported fact.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from macaron_local.agent.missing import honest_reply, need_for, plugin_hint

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
    r"\b(could ?n[o']t|can ?n[o']t|can'?t|cannot|won'?t|unable|failed|fail(s|ing)?|error|"
    r"did ?n[o']t|was ?n[o']t|not able|no tool|sorry|declined|not (done|set|added|saved|run))\b",
    re.I,
)


LIVE = re.compile(  # a sentence that reports live or personal data from the outside world
    r"°|\b(degrees|forecast(ed|s)?|sunny|cloudy|overcast|raining|snowing|humidity|mph|km/h)\b|"
    r"[$€£¥]\s?\d|\b\d[\d,.]*\s?(usd|eur|gbp|dollars|euros|pounds)\b|"
    r"\b(in stock|out of stock|on time|delayed|departs|arrives?|arriving|shipped|"
    r"out for delivery|tracking number|order (number|#)|confirmation (number|code)|trading at|"
    r"headlines?|your balance|booked for|is (now )?(on|off)|are (now )?(on|off))\b",
    re.I,
)
ACTION_REQUEST = re.compile(  # the user asks for something to be done, not for information
    r"^\W*(please |pls |can you |could you |would you |now )*(add(?! up)|put|set|remind|save|write|"
    r"create|delete|remove|move|rename|mark|check off|complete|note|jot|take a note|log|order|"
    r"book|reserve|send|text|email|message|whatsapp|turn|switch|play|call|pay|schedule|cancel|"
    r"buy|lock|unlock)\b|\bremind me\b",
    re.I,
)
SAYS_EMPTY = re.compile(  # the answer says the result was empty: not any "no" in it ("Your todo
    # list is: 'open', 'unread' (no due date)" reported items an empty call never returned)
    r"\b(nothing|none|empty|zero|0)\b|n't (have|find|see|any)\b|\bnot (find|see|any)\b|"
    r"\bno (\w+ ){0,2}(todos?|tasks?|items?|reminders?|notes?|files?|results?|match(es|ing)?|"
    r"entries|records?|events?|mentions?)\b",
    re.I,
)
EMPTY = {"", "[]", "{}", "()", "None", "''", '""', "0", "(0, [])", "set()"}
UNFINISHED = re.compile(r"```(repl|call)\b")  # the agent loop ran every closed block
NOT_LIVE = re.compile(r"\?|\b(if|whether|would you|do you want|let me|i can|i could)\b", re.I)


class Call(Protocol):
    @property
    def code(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def status(self) -> str: ...


def truthful(
    answer: str,
    calls: Sequence[Call],
    *,
    request: str = "",
    tools: Collection[str] = (),
    acting: Collection[str] = (),
) -> tuple[str, str | None]:
    """``(answer to show, why it was rewritten or None)`` for an agent turn's ``calls``;
    ``request`` is what the user asked and ``tools`` the tool names installed for the agent
    (both shape the reply the runtime writes: which tool is missing, which exist);
    ``acting`` names the tools that change something: when given, a claimed action needs a
    successful call of one of them, not only of tools that read."""
    ok = [c for c in calls if c.status == "ok"]
    if UNFINISHED.search(answer):  # a tool block cut off before its end: it never ran
        return _cut_off(request, tools, ok), "the answer was an unfinished tool block"
    turn = _Turn(answer, calls, ok, request, tools, acting)
    why = turn.contradiction()
    if why is not None:
        return turn.rewrite(), why
    return turn.annotated()


@dataclass(frozen=True)
class _Turn:
    """One agent turn's answer read against its record."""

    answer: str
    calls: Sequence[Call]
    ok: Sequence[Call]
    request: str
    tools: Collection[str]
    acting: Collection[str]

    @property
    def acted(self) -> bool:
        return _acted(self.ok, self.acting)

    def contradiction(self) -> str | None:
        """Why the record contradicts the answer (None: it does not)."""
        answer, request = self.answer, self.request
        if ADMITS.search(answer) or answer.rstrip().endswith("?"):
            return None  # an admission or a question back reports nothing as done
        claims, live = _claims(answer), _reports_live(answer)
        asked_to_act = bool(ACTION_REQUEST.search(request))
        if not self.ok:
            if claims or live or asked_to_act:
                what = "claimed an action" if claims or asked_to_act else "reported live data"
                return f"{what}, but no tool call succeeded"
            if NUMBER.search(answer) and not _backed(answer, [], request):
                return "reported numbers no tool call returned"
            return None
        if self.tools and need_for(request, self.tools) is not None:
            if (claims or live) and not _backed(answer, self.ok, request):
                return "reported what no installed tool can do; only other tools ran"
        if asked_to_act and self.acting and not self.acted:
            return "answered an action request, but no tool that changes anything succeeded"
        nothing = all(_empty(c.result) for c in self.ok)
        if nothing and not self.acted and not SAYS_EMPTY.search(answer):
            return "reported data, but every tool call returned nothing"
        return None

    def rewrite(self) -> str:
        """The reply the runtime writes from the record."""
        if not self.ok:
            failure = _failure(self.calls[-1]) if self.calls else ""
            if not self.request and not self.tools:
                return f"I could not do that. {failure}" if failure else NOTHING_RAN
            return honest_reply(self.request, self.tools, failure)
        last = self.ok[-1]
        code = _first_line(last.code, 120)
        if all(_empty(c.result) for c in self.ok) and not self.acted:
            found = f"I found nothing: `{code}` returned {last.result.strip() or 'nothing'}."
            if (
                not ACTION_REQUEST.search(self.request)
                and need_for(self.request, self.tools) is None
            ):
                return f"{found} Nothing was changed."  # a question the tools answered: empty
            return honest_reply(self.request, self.tools, found, looked=True)
        return honest_reply(
            self.request, self.tools, f"I only ran `{code}`.", changed=self.acted, looked=True
        )

    def annotated(self) -> tuple[str, str | None]:
        """An answer the record does not contradict, with what it leaves out added."""
        answer, calls, ok = self.answer, self.calls, self.ok
        admits = bool(ADMITS.search(answer))
        hint = plugin_hint(self.request, self.tools) if self.tools and not self.acted else None
        if not ok:
            return _told(answer, calls, admits, hint)
        last_failed = calls[-1].status != "ok"
        lacks_hint = hint and "plugin" not in answer.lower()
        if lacks_hint and not last_failed and not _backed(answer, ok, self.request):
            return f"{answer}\n\n{hint}", "the reply did not say which tool is missing"
        if not last_failed:
            if _claims(answer) and self.acting and not self.acted:
                return f"{answer}\n\n{NO_CHANGE}", "claimed an action, but only reading tools ran"
            return answer, None
        failure = _failure(calls[-1])
        if admits:
            if _names(answer, calls[-1]):
                return answer, None
            return f"{answer}\n\n{failure}", "the reply did not say what failed"
        if _claims(answer):  # an earlier call worked, the last failed: say what did not happen
            return f"{answer}\n\nBut the last step failed. {failure}", "the last tool call failed"
        return f"{answer}\n\n{failure}", "the last tool call failed"


def _empty(result: str) -> bool:
    return result.strip() in EMPTY


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _backed(answer: str, ok: Sequence[Call], request: str) -> bool:
    """Every number in ``answer`` is one a successful call returned or the user gave (up to
    rounding)."""
    said = [float(n) for n in NUMBER.findall(answer.replace(",", ""))]
    given = [request, *(c.result for c in ok)] if ok else []
    seen = [float(n) for text in given for n in NUMBER.findall(text.replace(",", ""))]
    return bool(said) and all(
        any(abs(x - y) <= max(0.05, 0.01 * abs(y)) for y in seen) for x in said
    )


def _acted(ok: Sequence[Call], acting: Collection[str]) -> bool:
    """A successful call of a tool that changes something (unknown without ``acting``)."""
    return bool(acting) and any(_calls(c, acting) for c in ok)


def _cut_off(request: str, tools: Collection[str], ok: Sequence[Call]) -> str:
    cut = "My next tool step was cut off before it ended, so it never ran."
    if not ok:
        return honest_reply(request, tools, cut)
    last = _first_line(ok[-1].code, 120)
    return f"I ran {len(ok)} tool step(s); the last that worked was `{last}`. {cut}"


def _told(
    answer: str, calls: Sequence[Call], admits: bool, hint: str | None
) -> tuple[str, str | None]:
    """No call succeeded and the answer claims nothing: add what failed and what is missing."""
    text, why = answer, None
    if calls and not (admits and _names(answer, calls[-1])):
        text = f"{answer}\n\n{_failure(calls[-1])}"
        why = "the reply did not say what failed" if admits else "the last tool call failed"
    if hint and (admits or calls) and "plugin" not in answer.lower():
        text, why = f"{text}\n\n{hint}", why or "the reply did not say which tool is missing"
    return text, why


NOTHING_RAN = (
    "I did not do that: no tool ran in this turn, so nothing was changed. "
    "Please ask again, or tell me more about what to do."
)


NO_CHANGE = "(Only tools that read ran in this turn: nothing was changed.)"


def _calls(call: Call, names: Collection[str]) -> bool:
    """The call's code calls one of the tools ``names`` (REPL code or a ```call body)."""
    return any(re.search(rf"\b{re.escape(name)}\s*\(|\"{re.escape(name)}\"", call.code)
               for name in names)  # fmt: skip


def _nothing_ran(request: str, tools: Collection[str]) -> str:
    return honest_reply(request, tools) if request or tools else NOTHING_RAN


def _reports_live(text: str) -> bool:
    """Some sentence of ``text`` states live data (a temperature, a price, a status)."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text)
    return any(LIVE.search(s) and not NOT_LIVE.search(s) for s in sentences)


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
