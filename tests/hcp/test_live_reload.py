"""Hot reload through the facade the app drives: the real Assistant starts the watchers, a saved
profile is live for the next turn, and a broken one reaches the listener (the app's notification)
with its file and line while the old profile keeps serving.
"""

from __future__ import annotations

from pathlib import Path

from macaron_local.facade import Assistant
from macaron_local.turns.turn import TurnRequest
from tests.serve.test_reload import wait_for
from tests.turns.conftest import FAST_PROFILE, write_fast_profile


def test_the_app_facade_reloads_and_reports(tmp_path: Path, _isolated_home: Path) -> None:
    write_fast_profile(_isolated_home)
    file = _isolated_home / "config" / "profiles" / "test-fast.toml"
    events: list[tuple[str, str]] = []
    assistant = Assistant("test-fast", db_path=tmp_path / "m.db")
    assistant.set_reload_listener(lambda kind, message: events.append((kind, message)))
    try:
        assert assistant.wait_ready(300), assistant.status
        session = assistant.create_session("reload").id
        before = assistant.run_turn(TurnRequest(session, "Say hi.", label="L0")).profile_hash
        file.write_text(FAST_PROFILE.replace("max_tokens = 24", "max_tokens = 20", 1))
        wait_for(lambda: any(k == "profile" for k, _ in events), "the reload event")
        after = assistant.run_turn(TurnRequest(session, "Say hi again.", label="L0")).profile_hash
        assert after != before and str(file) in dict(events)["profile"]

        broken = FAST_PROFILE + "\n[summary\n"
        line = broken.splitlines().index("[summary") + 1
        file.write_text(broken)
        kind, message = wait_for(
            lambda: next((e for e in events if e[0] == "profile_error"), None), "the error"
        )  # type: ignore[misc]
        assert str(file) in message and f"line {line}" in message
        still = assistant.run_turn(TurnRequest(session, "And once more.", label="L0")).profile_hash
        assert still == after  # the old (edited, valid) profile still serves
    finally:
        assistant.close()
