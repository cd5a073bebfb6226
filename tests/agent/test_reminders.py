"""Reminders fire: the runtime's clock, catch-up after a closed app, the shell commands, the app."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from macaron_local import paths
from macaron_local.agent.reminders import ReminderClock, listing
from macaron_local.agent.tools import ToolContext, use_context

NOW = datetime(2025, 3, 14, 10, 30)


def _add(data_dir: Path, text: str, at: str, now: datetime = NOW) -> dict[str, Any]:
    """Through the bundled tool itself, as the agent sets one."""
    from macaron_local.bundled.plugins.reminders import reminders_add

    ctx = ToolContext(workspace=data_dir / "ws", data_dir=data_dir, clock=lambda: now)
    with use_context(ctx):
        return reminders_add(text, at)


def test_a_due_reminder_is_delivered_once_and_a_failed_delivery_stays_pending(
    tmp_path: Path,
) -> None:
    _add(tmp_path, "call mom", "today 17:00")
    _add(tmp_path, "water plants", "in 2h")  # 12:30
    got: list[dict[str, Any]] = []
    clock = ReminderClock(tmp_path, got.append, now=lambda: datetime(2025, 3, 14, 12, 0))
    assert clock.tick() == [] and got == []  # nothing due yet
    clock.now = lambda: datetime(2025, 3, 14, 17, 0)
    fired = clock.tick()
    assert [r["text"] for r in got] == ["water plants", "call mom"]
    assert {r["status"] for r in fired} == {"fired"} and clock.tick() == []  # once only

    _add(tmp_path, "stretch", "today 18:00")

    def broken(_r: dict[str, Any]) -> None:
        raise RuntimeError("the app is not running")

    late = ReminderClock(tmp_path, broken, now=lambda: datetime(2025, 3, 14, 18, 5))
    assert late.tick() == [] and [r["text"] for r in listing(tmp_path)] == ["stretch"]


def test_reminders_missed_while_closed_fire_at_the_next_start(tmp_path: Path) -> None:
    _add(tmp_path, "yesterday's call", "2025-03-13T09:00", now=datetime(2025, 3, 13, 8, 0))
    got: list[dict[str, Any]] = []
    clock = ReminderClock(tmp_path, got.append, every_s=0.05).start()  # the real clock, now
    try:
        for _ in range(200):
            if got:
                break
            clock._stop.wait(0.05)
    finally:
        clock.stop()
    assert [r["text"] for r in got] == ["yesterday's call"]


def _macaron(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["macaron", *args], capture_output=True, text=True, env=os.environ, timeout=120
    )


def test_reminders_from_the_shell() -> None:
    r = _add(paths.data_dir(), "call mom", "2099-01-01T17:00")
    listed = _macaron("reminders", "list")
    assert (
        listed.returncode == 0
        and "2099-01-01T17:00" in listed.stdout
        and "call mom" in listed.stdout
    )
    snoozed = _macaron("reminders", "snooze", str(r["id"]), "--minutes", "15")
    assert snoozed.returncode == 0 and "snoozed to" in snoozed.stdout
    assert _macaron("reminders", "done", str(r["id"])).returncode == 0
    assert "no reminders" in _macaron("reminders", "list").stdout
    assert "done" in _macaron("reminders", "list", "--all").stdout
    missing = _macaron("reminders", "done", "999")
    assert missing.returncode != 0 and "no reminder 999" in missing.stderr


@pytest.mark.anyio
async def test_the_app_shows_a_due_reminder(tmp_path: Path) -> None:
    from macaron_local.tui.app import make_app
    from macaron_local.tui.settings import Settings
    from tests.tui.conftest import SIZE, wait_for
    from tests.tui.scripted import ScriptedAssistant

    # set the evening before, fell due while the app was closed
    _add(paths.data_dir(), "call mom", "2025-03-14T09:00", now=datetime(2025, 3, 13, 20, 0))
    shown: list[tuple[str, str]] = []
    assistant = ScriptedAssistant()
    app = make_app(Settings(), assistant, settings_file=tmp_path / "settings.toml")
    app.notify = lambda text, **kw: shown.append((str(kw.get("title")), str(text)))  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(text == "call mom" for _, text in shown))
        await wait_for(pilot, lambda: listing(paths.data_dir()) == [])  # fired: not pending
    assert any(title.startswith("Reminder") for title, _ in shown)


def test_a_reminder_for_a_time_already_past_is_refused(tmp_path: Path) -> None:
    """It would fire at once: the agent misread the time (seen: "6:15 tomorrow" set for today
    00:00). The refusal is an error the record shows, so the answer cannot claim it was set."""
    with pytest.raises(ValueError, match=r"2025-03-14T00:00 has already passed"):
        _add(tmp_path, "flight to Madrid", "2025-03-14T00:00")
    assert listing(tmp_path) == [] and _add(tmp_path, "flight", "tomorrow 06:15")["at"] == (
        "2025-03-15T06:15"
    )
