"""The experience log on a real SQLite store: opt-in, exclusion, signals, redaction, purge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from macaron_local import experience
from macaron_local.errors import StoreError
from macaron_local.experience import log
from macaron_local.hcp import load_profile
from macaron_local.store import NewToolCall
from tests.experience.helpers import commit, new_session, open_store


def _counts(db) -> tuple[int, int]:
    a = db.execute("SELECT COUNT(*) FROM experience").fetchone()[0]
    b = db.execute("SELECT COUNT(*) FROM experience_signals").fetchone()[0]
    return a, b


@pytest.fixture
def profile():
    return load_profile("tall-local")


def test_opt_in_off_writes_nothing(tmp_path: Path, profile) -> None:
    db = open_store(tmp_path)
    sid = new_session(db)
    turn = commit(db, sid, "my dog is called Biscuit", "Nice!")
    assert not experience.enabled(profile)  # off by default
    assert experience.record_turn(db, profile, turn) is None
    kept, message = experience.record_feedback(db, profile, turn.id, "correction", "Biscuit")
    assert not kept and message.startswith("not kept")
    assert _counts(db) == (0, 0)
    assert not experience.settings.settings_path().exists()


def test_profile_opt_in_and_user_override(tmp_path: Path, profile) -> None:
    db = open_store(tmp_path)
    sid = new_session(db)
    on = profile.model_copy(
        update={"experience": profile.experience.model_copy(update={"opt_in": True})}
    )
    assert experience.record_turn(db, on, commit(db, sid, "a", "b")) is not None
    experience.set_user_choice(False)  # the user's own "off" beats the profile
    assert experience.record_turn(db, on, commit(db, sid, "c", "d")) is None
    assert _counts(db) == (1, 0)


def test_excluded_session_is_not_kept(tmp_path: Path, profile) -> None:
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid, other = new_session(db), new_session(db)
    experience.record_turn(db, profile, commit(db, sid, "kept before exclusion", "ok"))
    experience.record_turn(db, profile, commit(db, other, "other chat", "ok"))
    assert experience.exclude_session(db, sid) == 1  # what was kept from it goes too
    assert experience.record_turn(db, profile, commit(db, sid, "after", "ok")) is None
    assert [r.request for r in experience.rows(db)] == ["other chat"]


def test_signals_feedback_retry_reroute(tmp_path: Path, profile) -> None:
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid = new_session(db)
    first = commit(db, sid, "sort a list in python", "Use a loop.", label="L0", kind="auto")
    experience.record_turn(db, profile, first)
    # the user retries the same request pinned to the coding specialist
    second = commit(
        db,
        sid,
        "sort a list in python",
        "sorted(xs)",
        label="L2",
        kind="manual",
        parent=first.parent_id,
    )
    experience.record_turn(db, profile, second)
    assert experience.record_feedback(db, profile, second.id, "up") == (
        True,
        "kept thumbs up locally for learning",
    )
    by_turn = {r.turn_id: r for r in experience.rows(db)}
    assert [(s.kind, s.value) for s in by_turn[first.id].signals] == [
        ("retry", second.id),
        ("reroute", "L2"),
    ]
    assert [s.kind for s in by_turn[second.id].signals] == ["up"]
    assert by_turn[second.id].route_kind == "manual"
    with pytest.raises(StoreError):
        experience.record_feedback(db, profile, "no-such-turn", "up")


def test_planted_secrets_never_reach_the_log(tmp_path: Path, profile) -> None:
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid = new_session(db)
    planted = [
        "sk-live-abcdefghijklmnop1234",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAABCDEFGHIJKLMNOP",
        "hunter22",
        "Bearer tok_abcdefghijk",
        "[NoAI]my salary",
    ]
    call = NewToolCall(
        step=0,
        label="L1",
        code="login(password='hunter22')",
        result="token: xoxb-1234567890-abcdefghij",
        status="ok",
    )
    turn = commit(
        db,
        sid,
        f"use {planted[0]} and {planted[1]}; [NoAI]my salary[/NoAI]",
        f"done with {planted[2]}, Authorization: {planted[4]}",
        label="L1",
        calls=(call,),
    )
    experience.record_turn(db, profile, turn, [call])
    experience.record_feedback(db, profile, turn.id, "correction", "my password is hunter22")
    dump = json.dumps(experience.export(db)) + json.dumps(
        [list(r) for r in db.execute("SELECT * FROM experience_signals").fetchall()]
    )
    for secret in [*planted, "xoxb-1234567890", "salary"]:
        assert secret.split()[-1] not in dump, secret
    row = experience.rows(db)[0]
    assert row.redactions >= 7
    assert row.tool_outcomes[0]["status"] == "ok"


def test_purge_removes_everything(tmp_path: Path, profile) -> None:
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid = new_session(db)
    for i in range(3):
        t = commit(db, sid, f"q{i}", f"a{i}")
        experience.record_turn(db, profile, t, checker={"kind": "contains", "expect": ["a"]})
        experience.record_feedback(db, profile, t.id, "down")
    assert _counts(db) == (3, 3)
    assert experience.purge(db) == 3
    assert _counts(db) == (0, 0)
    assert experience.export(db) == []
    assert log.status(db, profile)["turns"] == 0


def test_facade_feedback_is_kept_when_opted_in(tmp_path: Path) -> None:
    from macaron_local.facade import Assistant

    db_path = tmp_path / "macaron.db"
    db = open_store(tmp_path)
    sid = new_session(db)
    turn = commit(db, sid, "q", "a")
    assistant = Assistant(db_path=db_path)  # not started: the store works without the model
    assert not assistant.feedback(turn.id, "up").kept
    experience.set_user_choice(True)
    experience.record_turn(db, load_profile("tall-local"), turn)
    outcome = assistant.feedback(turn.id, "correction", "a better answer")
    assert outcome.kept and "correction" in outcome.message


def test_cli_status_export_purge(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from macaron_local import paths
    from macaron_local.experience.cli import experience as group
    from macaron_local.store import open_db

    runner = CliRunner()
    assert "ON" in runner.invoke(group, ["on"]).output
    db = open_db(paths.db_path())
    sid = new_session(db)
    turn = commit(db, sid, "my token is abc123secret", "ok")
    experience.record_turn(db, load_profile("tall-local"), turn)
    status = json.loads(runner.invoke(group, ["status", "--json"]).output)
    assert status["opt_in"] and status["turns"] == 1 and status["redactions"] == 1
    out = tmp_path / "exp.jsonl"
    assert runner.invoke(group, ["export", "-o", str(out)]).exit_code == 0
    assert "abc123secret" not in out.read_text() and "[REDACTED:password]" in out.read_text()
    assert "purged 1" in runner.invoke(group, ["purge", "--yes"]).output
    assert json.loads(runner.invoke(group, ["status", "--json"]).output)["turns"] == 0


def test_retention_expires_old_rows(tmp_path: Path, profile) -> None:
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid = new_session(db)
    experience.record_turn(db, profile, commit(db, sid, "old", "a"))
    db.execute("UPDATE experience SET created_at = '2000-01-01T00:00:00.000000+00:00'")
    db.conn.commit()
    experience.record_turn(db, profile, commit(db, sid, "new", "b"))  # retention_days = 30
    assert [r.request for r in experience.rows(db)] == ["new"]
