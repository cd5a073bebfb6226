"""End to end in a real terminal: the app in tmux on the real model, then the screen and SQLite.

Types a question and waits for the answer, sends a second one and cancels it with Esc, then
checks what the screen shows and that the database holds exactly the first turn.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.turns.conftest import write_fast_profile

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
SESSION = f"macaron-e2e-{os.getpid()}"


def tmux(*args: str) -> str:
    done = subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=30)
    return done.stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_until(cond: Callable[[], bool], what: str, timeout: float = 400) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}; screen:\n{screen()}")
        time.sleep(0.2)


def turns(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT request, answer FROM turns ORDER BY created_at").fetchall()


@pytest.fixture
def app_in_tmux(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    write_fast_profile(home)
    # the user already chose about experience logging: no first-run explainer in the way
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "experience.json").write_text('{"opt_in": false}\n')
    cmd = (
        f"cd {tmp_path} && MACARON_HOME={home} {sys.executable} -m macaron_local.tui "
        f"--profile test-fast; echo EXITED; sleep 30"
    )
    tmux("new-session", "-d", "-s", SESSION, "-x", "140", "-y", "40", cmd)
    tmux("resize-window", "-t", SESSION, "-x", "140", "-y", "40")
    try:
        yield home / "data" / "macaron.db"
    finally:
        tmux("kill-session", "-t", SESSION)


def test_ask_then_cancel_in_a_real_terminal(app_in_tmux: Path) -> None:
    db = app_in_tmux
    wait_until(lambda: "ready · test-fast" in screen(), "the model to load")
    tmux("send-keys", "-t", SESSION, "-l", "/chat say hello")
    tmux("send-keys", "-t", SESSION, "Enter")
    wait_until(lambda: len(turns(db)) == 1 and "answering" not in screen(), "the first answer")
    shown = screen()
    assert "L0 Chat · pinned" in shown and "say hello" in shown
    first_answer = turns(db)[0][1]
    assert first_answer.split()[0] in shown

    tmux("send-keys", "-t", SESSION, "-l", "tell me a long story about the sea")
    tmux("send-keys", "-t", SESSION, "Enter")
    wait_until(lambda: "Esc cancels" in screen(), "the second turn to start", timeout=120)
    tmux("send-keys", "-t", SESSION, "Escape")
    wait_until(lambda: "rolled back" in screen(), "the cancel notice", timeout=120)
    assert [r for r, _ in turns(db)] == ["say hello"]  # nothing from the cancelled turn

    tmux("send-keys", "-t", SESSION, "C-q")
    wait_until(lambda: "EXITED" in screen(), "the app to exit", timeout=300)
    assert "Traceback" not in screen()
    assert [r for r, _ in turns(db)] == ["say hello"]
