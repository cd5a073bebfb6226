"""The facade's store side on a real SQLite file (no model needed), and the settings file."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local import paths
from macaron_local.errors import ContractError, StoreError
from macaron_local.facade import Assistant, AssistantProtocol, badge
from macaron_local.store import NewTurn, commit_turn, open_db, save_summary
from macaron_local.tui.settings import Settings, load_settings, save_settings
from tests.tui.scripted import ScriptedAssistant


def _turn(text: str) -> NewTurn:
    return NewTurn(
        request=text,
        answer=f"answer to {text}",
        label="L2",
        route_kind="auto",
        route_probs={"L0": 0.1, "L2": 0.9},
        adapter_revision="base",
        profile_hash="f" * 64,
        timings={"route_ms": 5.0},
        tokens={"completion": 3},
    )


def test_both_assistants_implement_the_protocol(tmp_path: Path) -> None:
    assert isinstance(Assistant(db_path=tmp_path / "m.db"), AssistantProtocol)
    assert isinstance(ScriptedAssistant(), AssistantProtocol)


def test_sessions_history_branches_and_summaries(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    a = Assistant(db_path=db_path)
    s = a.create_session("numbers")
    db = open_db(db_path)
    first = commit_turn(db, s.id, _turn("one"), expected_head=None)
    other = commit_turn(db, s.id, _turn("uno"), expected_head=first.id, parent_id=None)
    save_summary(
        db, other.id, label="L2", text="the user said uno", n_tokens=4, adapter_revision="base"
    )
    [item] = a.history(s.id)
    assert (item.request, item.branch, item.branches) == ("uno", 2, 2)
    assert item.summary == "the user said uno" and item.route_probs["L2"] == 0.9
    assert badge(item.label, item.route_kind, name=a.specialists()["L2"]) == "L2 Coding · routed"
    assert [h.session_id for h in a.search("uno")] == [s.id]
    a.rename_session(s.id, "numeri")
    assert [x.title for x in a.list_sessions()] == ["numeri"]
    a.delete_session(s.id)
    assert a.list_sessions() == [] and a.search("uno") == []
    a.restore_session(s.id)
    assert "### You" in a.export_session(s.id, "markdown")
    new_id = a.import_session(a.export_session(s.id, "json"))
    assert [t.request for t in a.history(new_id)] == ["uno"]
    assert not a.feedback(item.id, "up").kept
    with pytest.raises(StoreError):
        a.feedback("nope", "down")


def test_profile_checks_report_errors_and_pending_approvals(tmp_path: Path) -> None:
    folder = paths.config_dir() / "profiles"
    folder.mkdir(parents=True)
    (folder / "broken.toml").write_text("schema_version = 1\n[profile\n")
    (folder / "logging.toml").write_text(
        'schema_version = 1\nextends = "tall-local"\n[profile]\nid = "logging"\n'
        'version = "1.0.0"\n[experience]\nopt_in = true\n'
    )
    a = Assistant(db_path=tmp_path / "m.db")
    assert {"broken", "logging", "tall-local"} <= {p.name for p in a.profiles()}
    broken = a.check_profile("broken")
    assert not broken.ok and "broken.toml" in broken.errors[0]
    pending = a.check_profile("logging")
    assert not pending.ok and any("experience" in p for p in pending.pending)
    ok = a.check_profile("tall-local")
    assert ok.ok and len(ok.content_hash) == 64
    assert a.model_report() is None and not a.ready  # nothing loaded until start()


def test_settings_file_round_trip_env_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.toml"
    assert load_settings(path) == Settings()
    save_settings(Settings(theme="light", keys={"chat.retry": "ctrl+g"}), path)
    assert load_settings(path).keys == {"chat.retry": "ctrl+g"}
    monkeypatch.setenv("MACARON_TUI_THEME", "dark")
    assert load_settings(path).theme == "dark"  # the environment wins over the file
    monkeypatch.delenv("MACARON_TUI_THEME")
    path.write_text("theme = [")
    with pytest.raises(ContractError, match="not valid TOML"):
        load_settings(path)
    path.write_text('theme = "pink"\n')
    with pytest.raises(ContractError, match="bad setting") as err:
        load_settings(path)
    assert err.value.where == "theme"
