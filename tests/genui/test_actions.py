"""Actions of each execution kind, and NoAI: a planted private value never reaches a model
prompt, a stored turn, a summary or any other record (real runtime, embedded model)."""

from __future__ import annotations

from typing import Any

import pytest

from macaron_local.errors import ContractError
from macaron_local.genui.actions import (
    UiState,
    execute,
    make_action,
    tool_kwargs,
    turn_text,
    visible_values,
)
from macaron_local.genui.catalogue import Document, default_catalogue
from macaron_local.turns.turn import TurnRequest
from macaron_local.turns.ui_host import RuntimeHost
from tests.genui.conftest import KITCHEN_SINK, SECRET


def filled(doc: Document) -> UiState:
    state = UiState(doc)
    state.set("email", "ada@example.org")
    state.set("card", SECRET)
    state.set("news", True)
    return state


def test_local_actions_update_here_and_reset_restores(sink: Document) -> None:
    state = filled(sink)
    state.set("budget", 70)
    change = make_action(sink, state, "budget", "change")
    assert change.execution.kind == "local" and change.state == {"budget": 70}
    assert execute(change, sink, state, None).kind == "local"
    reset = make_action(sink, state, "reset", "click")
    assert reset.execution.kind == "local" and reset.execution.reset
    execute(reset, sink, state, None)
    assert state.snapshot() == sink.initial_state()
    with pytest.raises(ContractError):
        execute(make_action(sink, state, "signup", "submit"), sink, state, None)


def test_visibility_rule_and_noai_prop_both_hide(sink: Document) -> None:
    doc = default_catalogue().document({**KITCHEN_SINK, "visibility": {"noai": ["email"]}})
    action = make_action(doc, filled(doc), "signup", "submit")
    assert action.origin.gesture == "submit" and action.execution.kind == "model"
    assert set(action.visibility.noai) == {"card", "email"}
    assert action.state["card"] == SECRET  # the action carries it locally...
    assert visible_values(action, doc) == {"news": True}  # ...the model sees only this
    text = turn_text(action, doc)
    assert SECRET not in text and "ada@example.org" not in text
    assert "2 private field(s)" in text


def test_tool_arguments_leave_noai_out(sink: Document) -> None:
    def add(text: str, tags: list[str] | None = None) -> None: ...

    action = make_action(sink, filled(sink), "save", "click")
    assert action.execution.kind == "tool" and action.execution.tool == "notes.add"
    kwargs = tool_kwargs(add, action, sink)
    assert set(kwargs) == {"text"} and "Email: ada@example.org" in kwargs["text"]
    assert SECRET not in repr(kwargs)


@pytest.fixture
def recorded(runtime: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every prompt the engine is asked to continue (answers and summaries)."""
    prompts: list[str] = []
    engine = runtime.engine
    original = engine.generate

    def generate(prompt: Any, **kw: Any) -> Any:
        prompts.append(prompt if isinstance(prompt, str) else engine.detokenize(prompt))
        return original(prompt, **kw)

    monkeypatch.setattr(engine, "generate", generate)
    return prompts


def everything_stored(runtime: Any) -> str:
    db = runtime.db()
    return "\n".join(repr(row) for name in db.table_names() for row in db[name].rows)


def test_a_model_action_is_a_sticky_l3_turn_without_the_noai_value(
    runtime: Any, recorded: list[str], sink: Document
) -> None:
    session = runtime.new_session("noai")
    ui_turn = runtime.run_turn(TurnRequest(session.id, "give me a signup form", label="L3"))
    host = RuntimeHost(runtime, session.id, ui_turn.id)
    state = filled(sink)
    outcome = execute(make_action(sink, state, "signup", "submit"), sink, state, host)
    runtime.finish_pending()
    assert outcome.kind == "model" and SECRET not in outcome.text
    assert outcome.value.label == "L3" and outcome.value.route_kind == "sticky"
    assert any("ada@example.org" in p for p in recorded)  # the visible value got through
    assert len(recorded) >= 3  # two answers and at least one summary
    assert all(SECRET not in p for p in recorded)
    stored = everything_stored(runtime)
    assert "ada@example.org" in stored and SECRET not in stored
    summaries = runtime.db()["summaries"].rows_where("turn_id = ?", [outcome.value.id])
    assert [s for s in summaries] and all(SECRET not in repr(s) for s in summaries)


def test_a_tool_action_goes_through_the_agents_gate(runtime: Any, sink: Document) -> None:
    session = runtime.new_session("tool")
    ui_turn = runtime.run_turn(TurnRequest(session.id, "a form to save my details", label="L3"))
    asked: list[str] = []
    runtime.agent(session.id).gate.confirm = lambda name, args: asked.append(name) or True
    host = RuntimeHost(runtime, session.id, ui_turn.id)
    state = filled(sink)
    outcome = execute(make_action(sink, state, "save", "click"), sink, state, host)
    assert outcome.kind == "tool" and asked == ["notes.add"]  # side effect: confirmed first
    assert outcome.value["text"].startswith("Everything")
    assert SECRET not in repr(outcome.value)
    found = runtime.agent(session.id).gate.call("notes.search", ["ada@example.org"])
    assert [n["id"] for n in found] == [outcome.value["id"]]
    runtime.agent(session.id).gate.confirm = lambda name, args: False
    with pytest.raises(PermissionError):
        execute(make_action(sink, state, "save", "click"), sink, state, host)
