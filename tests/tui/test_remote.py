"""Hybrid mode in the app: ``/remote``, the failover notification, and the backend badge.

The UI runs on the scripted assistant (its remote turns follow the hybrid hook's contract); the
facade's side of the backend (what the store keeps, what ``history`` returns) runs on real
SQLite here and against a real llama.cpp server in ``tests/remote/test_facade_remote.py``.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import Markdown, Static

from macaron_local.facade import NO_REMOTE, Assistant, badge, split_remote
from macaron_local.store import NewTurn, commit_turn, open_db
from macaron_local.tui.app import MacaronApp
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.prompt import PromptInput
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant, script

pytestmark = pytest.mark.anyio
URL = "https://venti.example.test"
CODE = "write code to reverse a list"


def answers(app: MacaronApp) -> list[AssistantMessage]:
    return list(app.chat.query(AssistantMessage))


def inspector_text(app: MacaronApp) -> str:
    return str(app.chat.query_one(Inspector).query_one("#inspector-body", Static).content)


async def test_remote_without_a_server_says_how_to_set_one_up(
    app: MacaronApp, notes: list[str]
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, f"/remote {CODE}")
        assert answers(app) == [] and chat(pilot).session_id is None  # no turn was run
        assert any(NO_REMOTE in n and n.startswith("No remote server") for n in notes)
        assert "MACARON_REMOTE_URL" in NO_REMOTE and "macaron remote login" in NO_REMOTE
        # nothing typed is lost: the command is back in the input
        assert chat(pilot).query_one(PromptInput).text == f"/remote {CODE}"


async def test_remote_turn_gets_a_remote_badge_kept_in_history(
    app: MacaronApp, notes: list[str]
) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.remote_url = URL
    scripted.hold = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, f"/remote {CODE}", wait=False)
        await wait_for(pilot, lambda: answers(app) and answers(app)[0].text.count(" ") >= 2)
        assert answers(app)[0].badge_text == "L2 Coding · routed · answering remotely…"
        scripted.hold.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        widget = answers(app)[0]
        assert widget.badge_text == "L2 Coding · routed · remote"
        assert widget.item is not None and widget.item.backend == "remote"
        assert widget.item.request == CODE  # "/remote " is not part of the request
        assert "Backend remote (Macaron-V1-Venti, forced)" in inspector_text(app)
        await send(pilot, "hello")  # the next turn is local again
        assert answers(app)[1].badge_text == "L0 Chat · routed"
        await chat(pilot).show_history()  # history shows each turn's backend
        await pilot.pause()
        assert [w.badge_text for w in answers(app)] == [
            "L2 Coding · routed · remote",
            "L0 Chat · routed",
        ]
        assert not [n for n in notes if "emote" in n]  # no notice for a healthy remote turn


async def test_failover_notifies_discards_partial_text_and_marks_the_badge(
    app: MacaronApp, notes: list[str]
) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.remote_url, scripted.remote_fail = URL, "server_error"
    scripted.hold = threading.Event()  # the local rerun holds after its third word
    _, answer = script(CODE)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, f"/remote {CODE}", wait=False)
        await wait_for(
            pilot,
            lambda: (
                answers(app)
                and "answering locally" in answers(app)[0].badge_text
                and answers(app)[0].text.count(" ") >= 2
            ),
        )
        widget = answers(app)[0]
        # the partial remote text ("Here is a") was cleared before the local rerun streamed
        assert widget.text == " ".join(answer.split(" ")[:3])
        assert "remote failed: server_error" in widget.badge_text
        assert any(
            n.startswith("Remote failed: remote failed: HTTP 500")
            and "discarded" in n
            and "answering locally" in n
            for n in notes
        )
        prompt = chat(pilot).query_one(PromptInput)
        await pilot.press("a", "b")  # the UI is not blocked while the turn streams
        assert prompt.text == "ab"
        scripted.hold.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert widget.badge_text == "L2 Coding · routed · local (remote failed: server_error)"
        assert widget.text == answer and widget.query_one(Markdown).source == answer
        assert "local: the remote failed (server_error: HTTP 500)" in inspector_text(app)


async def test_remote_alone_names_the_server(app: MacaronApp, notes: list[str]) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.remote_url = URL
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/remote")
        assert answers(app) == []
        assert any(URL in n and "/remote <message>" in n for n in notes)


def test_split_remote_and_badges() -> None:
    assert split_remote("/remote write a parser") == ("write a parser", True)
    assert split_remote("//remote literally") == ("//remote literally", False)
    assert badge("L2", "manual", "remote", name="Coding") == "L2 Coding · pinned · remote"
    assert (
        badge("L0", "auto", "local", "timeout", name="Chat") == "L0 Chat · routed · local (remote "
        "failed: timeout)"
    )
    assert badge("L1", "sticky", name="Agent") == "L1 Agent · sticky"
    assert badge("doer", "auto") == "doer · routed"  # a label with no name
    assert badge("L1", "auto", name="Agent", failed_calls=2) == (
        "L1 Agent · routed · 2 tool calls failed"
    )


def test_the_store_keeps_the_backend_for_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = tmp_path / "m.db"
    a = Assistant(db_path=db_path)
    s = a.create_session("hybrid")
    db = open_db(db_path)
    common = {
        "label": "L2",
        "route_kind": "auto",
        "route_probs": {"L2": 1.0},
        "adapter_revision": "base",
        "profile_hash": "f" * 64,
    }
    first = commit_turn(
        db,
        s.id,
        NewTurn(request="one", answer="remote answer", backend="remote", **common),
        expected_head=None,
    )
    commit_turn(
        db,
        s.id,
        NewTurn(request="two", answer="local answer", failover_reason="timeout", **common),
        expected_head=first.id,
    )
    remote, failed = a.history(s.id)
    assert (remote.backend, remote.failover_reason) == ("remote", None)
    assert (failed.backend, failed.failover_reason) == ("local", "timeout")
    assert a.remote_endpoint() is None  # tall-local names no endpoint, and no variable is set
    monkeypatch.setenv("MACARON_REMOTE_URL", URL)
    assert a.remote_endpoint() == URL  # /remote is the user's consent, even on tall-local
