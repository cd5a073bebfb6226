"""The macaron command as a user runs it: a real subprocess on the real model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def macaron(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MACARON_HOME": str(home)}
    return subprocess.run(["macaron", *args], capture_output=True, text=True, env=env, timeout=300)


def test_ask_json_records_a_turn_and_continues_a_session(tmp_path: Path) -> None:
    first = macaron("ask", "--json", "--label", "L0", "Say hello.", home=tmp_path)
    assert first.returncode == 0, first.stderr
    rec = json.loads(first.stdout)
    assert rec["answer"] and rec["label"] == "L0" and rec["route_kind"] == "manual"
    assert len(rec["profile_hash"]) == 64 and rec["adapter_revision"]
    second = macaron("ask", "--json", "--session", rec["session_id"], "And goodbye?", home=tmp_path)
    assert second.returncode == 0, second.stderr
    rec2 = json.loads(second.stdout)
    assert rec2["session_id"] == rec["session_id"] and rec2["route_kind"] in {"auto", "fallback"}
    assert rec2["tool_calls"] == [] and rec2["parent_id"] == rec["id"]  # the whole record
    assert (tmp_path / "data" / "macaron.db").is_file()


def test_route_file_prints_one_line_per_input(tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text('{"text": "write a regex for emails"}\n\n{"text": "hi!", "label": "L0"}\n')
    done = macaron("route", "--file", str(f), home=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 2 and all(r["label"] in {"L0", "L1", "L2", "L3"} for r in rows)
    assert all(r["ms"] > 0 for r in rows)


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    done = macaron("ask", "--profile", "no-such-profile", "hi", home=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error:") and "Traceback" not in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    done = macaron("route", "--file", str(bad), home=tmp_path)
    assert done.returncode != 0 and "line 1" in done.stderr and "Traceback" not in done.stderr


def test_ask_ends_with_the_answer_the_record_backs(tmp_path: Path) -> None:
    """The agent's streamed text may claim what no tool call did (here every side effect is
    declined: there is no terminal to ask on); the runtime then replaces the answer, and `ask`
    must show that one last, not leave the claim as the final word on the screen."""
    import sqlite3

    done = macaron(
        "ask", "--label", "L1", "remind me to water the plants tomorrow at 9am", home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(tmp_path / "data" / "macaron.db")
    (answer,) = db.execute("SELECT answer FROM turns").fetchone()
    assert done.stdout.rstrip().endswith(answer.strip()), (done.stdout, answer)
    if "the streamed answer was replaced" in done.stderr:  # what it said is not what it did
        assert "declined" in answer or "did not" in answer, answer
