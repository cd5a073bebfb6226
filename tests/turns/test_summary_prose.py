"""An agent turn's summary says what happened in prose, never the REPL code (issue 24 item 6).

The check itself on summaries the agent adapter is known to write (its REPL block again); the
replacement built from a real committed turn's record (real runtime, real SQLite); and the
embedded model's own L1 summary after a real agent turn."""

from __future__ import annotations

from datetime import UTC, datetime

from macaron_local.engine import Completion
from macaron_local.store import ToolCallRecord, summaries
from macaron_local.turns.adapters import Binding
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.summary import checked_summary, looks_like_code, record_summary
from macaron_local.turns.turn import TurnRequest

CODE = [
    '```repl\nreminders.add("call mom", "today 17:00")\n```',
    'reminders.add("call mom", "today 17:00")',
    "for t in todos.list():\n    print(t['title'])",
    "x = todos.list()\nlen(x)",
    "import csv\nThe user asked for totals.",
    "[tool] {'id': 3}",
]
PROSE = [
    "The user asked to be reminded to call mom at 17:00. The assistant set reminder 12.",
    "The user asked for the weather in Boston. No weather tool is installed; nothing ran.",
    "The assistant called reminders.add, which failed with TypeError (no time given).",
    "Totals: rent 1200, food 340 (EUR). The user wants them by Friday: the report is due.",
]


class Done:
    def __init__(self, text: str) -> None:
        self.done = Completion(text=text)

    def result(self) -> Completion:
        return self.done


def test_code_is_caught_and_prose_is_kept() -> None:
    assert all(looks_like_code(text) for text in CODE)
    assert not any(looks_like_code(text) for text in PROSE)


def test_a_code_summary_is_replaced_by_the_record(runtime: Runtime) -> None:
    s = runtime.new_session()
    turn = runtime.run_turn(TurnRequest(s.id, "remind me at 5pm to call mom", label="L1"))
    runtime.finish_pending()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    calls = (
        ToolCallRecord(id="c0", turn_id=turn.id, created_at=at, step=0, label="L1",
                       code="reminders.add('call mom')", status="error",
                       result="TypeError: reminders.add(): missing a required argument: 'at'"),
        ToolCallRecord(id="c1", turn_id=turn.id, created_at=at, step=1, label="L1",
                       code='reminders.add("call mom", "today 17:00")', status="ok",
                       result="{'id': 1}"),
    )  # fmt: skip
    record = turn.model_copy(update={"tool_calls": calls})
    code = '```repl\nreminders.add("call mom", "today 17:00")\n```'
    text = runtime._save_summary(record, Binding("L1", None, "base"), Done(code))  # type: ignore[arg-type]
    assert text == summaries(runtime.db(), [turn.id])[turn.id].text
    assert not looks_like_code(text)
    assert text.startswith("The user asked: remind me at 5pm to call mom")
    assert "2 tool steps: reminders.add (error: TypeError: reminders.add(): missing" in text
    assert "reminders.add (ok)" in text and "It answered: " in text
    chat = runtime.run_turn(TurnRequest(s.id, "thanks", label="L0"))  # a label with no tools
    kept = runtime._save_summary(chat, Binding("L0", None, "base"), Done("x = 1"))  # type: ignore[arg-type]
    assert kept == "x = 1"


def test_the_record_summary_without_tools_and_a_call_block(runtime: Runtime) -> None:
    s = runtime.new_session()
    turn = runtime.run_turn(TurnRequest(s.id, "what's the weather in Boston?", label="L1"))
    runtime.finish_pending()
    bare = turn.model_copy(update={"tool_calls": ()})
    assert "No tool ran." in record_summary(bare)
    call = ToolCallRecord(
        id="c", turn_id=turn.id, created_at=datetime(2026, 1, 1, tzinfo=UTC), step=0,
        label="L1", code='{"tool": "pizza.order", "args": {}}', status="error",
        result="PermissionError: tool pizza.order is not available to the agent",
    )  # fmt: skip
    one = record_summary(turn.model_copy(update={"tool_calls": (call,)}))
    assert "1 tool step: pizza.order (error: PermissionError" in one and "Nothing was done." in one
    assert checked_summary(PROSE[0], turn) == PROSE[0]


def test_the_embedded_models_agent_summary_is_prose(runtime: Runtime) -> None:
    s = runtime.new_session()
    turns = [
        runtime.run_turn(TurnRequest(s.id, text, label="L1"))
        for text in ("add buy oat milk to my todos", "what are my todos?")
    ]
    runtime.finish_pending()
    written = summaries(runtime.db(), [t.id for t in turns])
    for t in turns:
        assert not looks_like_code(written[t.id].text), written[t.id].text
