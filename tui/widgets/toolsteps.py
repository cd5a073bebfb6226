"""An agent turn's tool steps, the way terminal agents show them: one folded line per call.

Owns the presentation of a turn's ``tool_calls`` (the store's records): each call as a
``Collapsible`` titled with its status mark and the call (``todos.add("milk")`` or the first
line of a REPL block), folded by default; Enter or a click unfolds the whole code and the
result or error. Shows what it is given; asks nothing and runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from macaron_local.facade import ToolCallRecord as Call  # the record's own tool-call type

MARKS = {"ok": "✓", "error": "✗", "declined": "⊘", "timeout": "⌛", "crashed": "✗"}
TITLE_CHARS = 72
RESULT_CHARS = 2000


def call_text(code: str) -> str:
    """``tool(arg=value, ...)`` for a discrete ```call body, else the REPL code as it is."""
    try:
        req = json.loads(code)
        name, args = req["tool"], req.get("args", {})
    except (ValueError, KeyError, TypeError):
        return code.strip()
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    else:
        shown = ", ".join(repr(v) for v in args) if isinstance(args, list) else repr(args)
    return f"{name}({shown})"


def step_title(call: Call) -> str:
    """``✗ step 1 · error · reminders.search("mom")``: one line, cut to fit the chat."""
    lines = [ln.strip() for ln in call_text(call.code).splitlines() if ln.strip()]
    head = lines[0] if lines else "(empty)"
    if len(lines) > 1:
        head += f" … (+{len(lines) - 1} lines)"
    if len(head) > TITLE_CHARS:
        head = head[: TITLE_CHARS - 1] + "…"
    mark = MARKS.get(call.status, "?")
    return f"{mark} step {call.step + 1} · {call.status} · {head}"


def steps_heading(calls: Sequence[Call]) -> str:
    """``2 tool steps · 1 failed`` above the folded steps."""
    failed = sum(1 for c in calls if c.status not in ("ok", "declined"))
    noun = "tool step" if len(calls) == 1 else "tool steps"
    return f"{len(calls)} {noun}" + (f" · {failed} failed" if failed else "")


def _result_text(call: Call) -> str:
    result = call.result if call.result.strip() else "(no output)"
    return result if len(result) <= RESULT_CHARS else result[:RESULT_CHARS] + " … [cut]"


class ToolSteps(Vertical):
    """The folded tool steps of one turn (nothing is shown for a turn without any)."""

    DEFAULT_CSS = """
    ToolSteps { height: auto; margin: 0 0 1 0; }
    ToolSteps.-empty { display: none; }
    ToolSteps > .steps-heading { color: $text-muted; }
    ToolSteps Collapsible { padding-bottom: 0; border-top: none; background: transparent; }
    ToolSteps .step-code { color: $text; }
    ToolSteps .step-result { color: $text-muted; }
    ToolSteps .step-result.-failed { color: $error; }
    """

    def __init__(self, calls: Iterable[Call] = (), **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.calls: list[Call] = list(calls)
        self.set_class(not self.calls, "-empty")

    def compose(self) -> ComposeResult:
        yield from self._widgets()

    def _widgets(self) -> list[Static | Collapsible]:
        if not self.calls:
            return []
        out: list[Static | Collapsible] = [
            Static(steps_heading(self.calls), classes="steps-heading", markup=False)
        ]
        for call in self.calls:
            failed = "" if call.status in ("ok", "declined") else " -failed"
            out.append(
                Collapsible(
                    Static(call_text(call.code), classes="step-code", markup=False),
                    Static(_result_text(call), classes="step-result" + failed, markup=False),
                    title=Content(step_title(call)),  # type: ignore[arg-type]
                    collapsed=True,
                    classes=f"step -{call.status}",
                )
            )
        return out

    async def show(self, calls: Iterable[Call]) -> None:
        """Replace the steps shown (the turn's record when it is final); the same steps again
        keep what the user unfolded."""
        new = list(calls)
        if new == self.calls and (self.children or not new):
            return
        self.calls = new
        self.set_class(not self.calls, "-empty")
        await self.remove_children()
        await self.mount_all(self._widgets())
