"""GenUI on the real turn path: L3 decodes under the catalogue's grammar (built once), a grammar
that cannot be built falls back with a notice, a UI submission goes back to L3 as a sticky turn
without its NoAI values, and a UI's tool actions pass the agent's allowlist (real engine, real
bundled L3 adapter, real SQLite, through the facade the TUI drives)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from macaron_local.errors import PluginError
from macaron_local.facade import Assistant, TurnItem
from macaron_local.genui.actions import UiState, make_action
from macaron_local.genui.catalogue import Document, default_catalogue
from macaron_local.genui.grammar import catalogue_gbnf
from macaron_local.genui.serving import GrammarCache, action_tools
from macaron_local.genui.stream import split_answer
from macaron_local.store import get_session, get_turn
from macaron_local.turns.turn import TurnEvents, TurnRequest
from tests.conftest import macaron_home
from tests.genui.conftest import SECRET

PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "test-genui"
version = "1.0.0"
description = "tall-local with its bundled adapters, short answers and a narrow agent allowlist"

[summary]
max_tokens = 24

[sampling.defaults]
temperature = 0.0
max_tokens = 24

[sampling.overrides.L3]
temperature = 0.0
max_tokens = 224

[tools.allow]
L1 = ["notes.*", "clock.*"]
"""
UI_ANSWER = re.compile(r"\A(?:[^`\n]+\n)?```ui\n(.*)\n```\Z", re.S)
UI_START = re.compile(r'\A(?:[^`\n]+\n)?```ui\n\{"title": ')


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Assistant]:
    home = tmp_path_factory.mktemp("genui-turns")
    (home / "config" / "profiles").mkdir(parents=True)
    (home / "config" / "profiles" / "test-genui.toml").write_text(PROFILE)
    with macaron_home(home):
        found = Assistant("test-genui", db_path=home / "data" / "macaron.db")
        assert found.wait_ready(120), found.status
    yield found
    found.close()


@pytest.fixture(scope="module")
def drawn(assistant: Assistant) -> TurnItem:
    """A session whose last turn is an L3 answer (the UI later actions come from)."""
    session = assistant.create_session("pizza")
    return assistant.run_turn(TurnRequest(session.id, "Let me choose a pizza size", label="L3"))


def runtime_of(assistant: Assistant) -> Any:
    return assistant._rt()  # the runtime the facade drives (tests look at its engine)


@pytest.fixture
def calls(assistant: Assistant, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every engine request: its prompt text and grammar (answers and summaries)."""
    engine = runtime_of(assistant).engine
    seen: list[dict[str, Any]] = []
    original = engine.generate

    def generate(prompt: Any, **kw: Any) -> Any:
        text = prompt if isinstance(prompt, str) else engine.detokenize(prompt)
        seen.append({"prompt": text, "grammar": kw.get("grammar")})
        return original(prompt, **kw)

    monkeypatch.setattr(engine, "generate", generate)
    return seen


def check_l3_answer(item: TurnItem) -> None:
    """What the grammar guarantees: plain text without a fence, or an optional lead line and
    one ui block of JSON whose components are all catalogue types."""
    answer = split_answer(item.answer)
    m = UI_ANSWER.match(item.answer)
    if m is None:
        assert "`" not in item.answer and answer.document is None and answer.error is None
        return
    data = json.loads(m.group(1))
    known = set(default_catalogue().models)
    assert data["title"] and data["components"]
    assert {c["type"] for c in data["components"]} <= known
    # rules across fields (ids, value in options, ...) are the catalogue's, not the grammar's
    assert answer.document is not None or "not JSON" not in (answer.error or "")


def test_l3_decodes_under_the_catalogue_grammar_built_once(
    assistant: Assistant, drawn: TurnItem, calls: list[dict[str, Any]]
) -> None:
    runtime = runtime_of(assistant)
    grammars = runtime.ui_grammars
    assert grammars.builds == 1  # the drawn turn built it
    session = assistant.create_session("dark mode")
    second = assistant.run_turn(TurnRequest(session.id, "Should I turn dark mode on?", label="L3"))
    assert grammars.builds == 1  # the second L3 turn reused it
    assert second.label == "L3" and drawn.label == "L3"
    constrained = [c["grammar"] for c in calls if c["grammar"] is not None]
    assert len(constrained) == 1  # the L3 answer; its summary decodes freely
    tools = action_tools(runtime.profile, runtime.registry)
    assert tools == ("clock.days_until", "clock.now", "notes.add", "notes.search")
    assert constrained[0] == catalogue_gbnf(default_catalogue(), tools=tools)
    assert "tool:notes.add" in constrained[0] and "tool:shell.run" not in constrained[0]
    done = [i for i in (drawn, second) if i.meta["finish"] in {"stop", "eog"}]
    assert done  # (an answer cut by max_tokens is a prefix of the grammar: a fence or no `)
    for item in (drawn, second):
        if item in done:
            check_l3_answer(item)
        else:
            assert UI_START.match(item.answer) or "`" not in item.answer
    before = len(calls)
    assert assistant.run_turn(TurnRequest(session.id, "hello", label="L0")).label == "L0"
    assert [c["grammar"] for c in calls[before:]] == [None] * (len(calls) - before)


def test_a_grammar_that_cannot_be_built_falls_back_with_a_notice(
    assistant: Assistant, calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = runtime_of(assistant)
    broken = GrammarCache(
        gbnf=lambda cat, tools: catalogue_gbnf(cat, tools=tools) + "broken ::= no-such-rule\n"
    )
    monkeypatch.setattr(runtime, "ui_grammars", broken)
    session = assistant.create_session("fallback")
    notices: list[Any] = []
    result = runtime.run_turn(
        TurnRequest(session.id, "Thanks, that is all.", label="L3"),
        TurnEvents(on_notice=notices.append),
    )
    assert [n.kind for n in notices] == ["grammar"]
    assert "llama.cpp rejected the grammar" in notices[0].message
    turn = get_turn(runtime.db(), result.id)
    assert turn.label == "L3" and turn.answer
    assert get_session(runtime.db(), session.id).head_turn_id == turn.id  # committed
    assert calls[0]["grammar"] is None  # decoded unconstrained
    again: list[Any] = []
    runtime._ui_grammar("L3", TurnEvents(on_notice=again.append))  # cached, not rebuilt...
    assert broken.builds == 1 and [n.kind for n in again] == ["grammar"]  # ...and still said


def fill_signup(doc: Document) -> UiState:
    state = UiState(doc)
    state.set("email", "ada@example.org")
    state.set("card", SECRET)
    state.set("news", True)
    return state


def everything_stored(runtime: Any) -> str:
    db = runtime.db()
    return "\n".join(repr(row) for name in db.table_names() for row in db[name].rows)


def test_a_ui_submission_reaches_l3_sticky_without_its_noai_value(
    assistant: Assistant, drawn: TurnItem, sink: Document, calls: list[dict[str, Any]]
) -> None:
    from macaron_local.experience.settings import set_user_choice

    set_user_choice(True)  # opted in: the experience log must not get it either
    runtime = runtime_of(assistant)
    action = make_action(sink, fill_signup(sink), "signup", "submit")
    assert action.state["card"] == SECRET  # planted: the action carries it locally
    routes: list[tuple[str, str]] = []
    item = assistant.ui_send(
        drawn.session_id,
        action,
        sink,
        TurnEvents(on_route=lambda r: routes.append((r.label, r.kind))),
    )
    runtime.finish_pending()
    assert routes == [("L3", "sticky")] and item.label == "L3"
    assert get_turn(runtime.db(), item.id).tool_result_of == drawn.id
    assert item.request.startswith("[ui] Everything: Sign up") and SECRET not in item.request
    prompts = [c["prompt"] for c in calls]
    assert len(prompts) >= 2  # the answer and its summary
    assert any("ada@example.org" in p for p in prompts)  # the visible value got through
    assert all(SECRET not in p for p in prompts)
    stored = everything_stored(runtime)
    assert "ada@example.org" in stored and SECRET not in stored
    exp = [r for r in runtime.db()["experience"].rows if "ada@example.org" in repr(r)]
    assert exp and SECRET not in repr(exp)
    summary = [s for s in runtime.db()["summaries"].rows_where("turn_id = ?", [item.id])]
    assert summary and SECRET not in repr(summary)


BUTTONS = {
    "title": "Tools",
    "components": [
        {"type": "input", "id": "topic", "label": "Topic", "kind": "text", "value": "pizza"},
        {
            "type": "input",
            "id": "pin",
            "label": "PIN",
            "kind": "text",
            "value": SECRET,
            "noai": True,
        },
        {"type": "button", "id": "save", "label": "Save", "action": "tool:notes.add"},
        {"type": "button", "id": "run", "label": "Run", "action": "tool:shell.run"},
    ],
}


def test_ui_tool_runs_an_allowlisted_tool_and_refuses_others(
    assistant: Assistant, drawn: TurnItem
) -> None:
    doc = default_catalogue().document(BUTTONS)
    state = UiState(doc)
    asked: list[str] = []
    save = make_action(doc, state, "save", "click")
    note = assistant.ui_tool(
        drawn.session_id, save, doc, confirm=lambda name, args: asked.append(name) or True
    )
    assert asked == ["notes.add"]  # a side effect: confirmed first
    assert "Topic: pizza" in note["text"] and SECRET not in repr(note)
    with pytest.raises(PermissionError):  # the user says no: nothing runs
        assistant.ui_tool(drawn.session_id, save, doc, confirm=lambda name, args: False)
    with pytest.raises(PluginError, match="shell.run is not available"):
        assistant.ui_tool(
            drawn.session_id,
            make_action(doc, state, "run", "click"),
            doc,
            confirm=lambda name, args: True,
        )
    gate = runtime_of(assistant).agent(drawn.session_id).gate
    found = gate.call("notes.search", ["pizza"])
    assert [n["id"] for n in found] == [note["id"]]  # the same tool layer the agent reads
