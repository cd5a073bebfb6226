"""An agent REPL idle for long is closed (one process per conversation would pile up under
``serve``), and the next agent turn of that conversation is told its namespace is gone."""

from __future__ import annotations

import os

import pytest

from macaron_local.turns import pipeline
from macaron_local.turns.pipeline import IDLE_NOTE, Runtime
from macaron_local.turns.turn import TurnRequest
from tests.agent.test_boundary import _wait_for


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:\tZ") for line in f)
    except (ProcessLookupError, FileNotFoundError):
        return False


def _gone(pid: int) -> bool:
    return _wait_for(lambda: not _alive(pid))


def test_an_idle_repl_is_closed_and_its_loss_is_said(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = runtime.agent("idle-a")
    assert first.repl is not None, "the OS sandbox is needed for this test (bubblewrap)"
    assert first.repl.run("x = 41").status == "ok"
    pid = first.repl.pid
    assert pid is not None and _alive(pid)
    monkeypatch.setattr(pipeline, "IDLE_REPL_S", 0.0)  # everything else counts as idle now
    runtime.agent("idle-b")  # another conversation's turn
    assert "idle-a:L1" not in runtime._agents and _gone(pid)
    monkeypatch.setattr(pipeline, "IDLE_REPL_S", 900.0)
    again = runtime.agent("idle-a")
    assert again is not first and "NameError" in again.repl.run("x").output  # a new namespace
    seen: list[list[dict[str, str]]] = []

    class Recorder:  # the session's real agent, recording the messages the turn hands it
        gate = again.gate

        def run(self, step, messages, *, max_steps):
            seen.append(messages)
            return again.run(lambda msgs: "Nothing to do.", messages, max_steps=max_steps)

    monkeypatch.setattr(runtime, "agent", lambda session_id, label="L1": Recorder())
    s = runtime.new_session()
    runtime._agents_idled.add(f"{s.id}:L1")
    runtime.run_turn(TurnRequest(s.id, "what was x?", label="L1"))
    assert any(m["content"] == IDLE_NOTE for m in seen[0])
    assert f"{s.id}:L1" not in runtime._agents_idled  # said once
