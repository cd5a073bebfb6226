"""Reminders that remind: the runtime's clock over the reminders in ``personal.db``.

Owns :class:`ReminderClock` (a thread the app starts through the facade: every ``every_s``
seconds it hands each reminder that has fallen due to ``on_due``, including those that fell due
while the app was closed, then marks it ``fired``; a failed delivery leaves it pending for the
next tick) and the operations ``macaron reminders`` offers from the shell: list, done, snooze.
Times are the user's local wall-clock time, as ``reminders.add`` stores them. The desktop
notifier (``notify-send``) is used when the system has it; nothing here touches the UI.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from macaron_local.agent.personal import personal_db

log = logging.getLogger(__name__)
STAMP = "%Y-%m-%dT%H:%M"


def _row(r: Any) -> dict[str, Any]:
    return {"id": r["id"], "text": r["text"], "at": r["at"], "status": r["status"]}


def due(data_dir: Path, now: datetime) -> list[dict[str, Any]]:
    """Pending reminders at or before ``now``, oldest first."""
    with personal_db(data_dir) as db:
        rows = db.execute(
            "SELECT * FROM reminders WHERE status = 'pending' AND at <= ? ORDER BY at, id",
            (now.strftime(STAMP),),
        )
        return [_row(r) for r in rows]


def listing(data_dir: Path, *, everything: bool = False) -> list[dict[str, Any]]:
    """Pending reminders (every reminder with ``everything``), by time."""
    where = "" if everything else "WHERE status = 'pending'"
    with personal_db(data_dir) as db:
        return [_row(r) for r in db.execute(f"SELECT * FROM reminders {where} ORDER BY at, id")]


def set_status(data_dir: Path, reminder_id: int, status: str, at: str | None = None) -> dict:
    """Mark one reminder ``done``/``fired``, or pending again at ``at`` (snooze)."""
    with personal_db(data_dir) as db:
        row = db.execute("SELECT * FROM reminders WHERE id = ?", (reminder_id,)).fetchone()
        if row is None:
            raise KeyError(f"no reminder {reminder_id}")
        db.execute(
            "UPDATE reminders SET status = ?, at = ? WHERE id = ?",
            (status, at or row["at"], reminder_id),
        )
        return _row(db.execute("SELECT * FROM reminders WHERE id = ?", (reminder_id,)).fetchone())


def snooze(data_dir: Path, reminder_id: int, minutes: int, now: datetime) -> dict:
    return set_status(
        data_dir, reminder_id, "pending", (now + timedelta(minutes=minutes)).strftime(STAMP)
    )


class ReminderClock:
    """Hands due reminders to ``on_due`` on its own thread until :meth:`stop`."""

    def __init__(
        self,
        data_dir: Path,
        on_due: Callable[[dict[str, Any]], None],
        *,
        every_s: float = 15.0,
        now: Callable[[], datetime] = datetime.now,
        desktop: bool = True,
    ) -> None:
        self.data_dir, self.on_due, self.every_s, self.now = data_dir, on_due, every_s, now
        self.desktop = desktop and shutil.which("notify-send") is not None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="reminders")

    def start(self) -> ReminderClock:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def tick(self) -> list[dict[str, Any]]:
        """Deliver what is due now; returns what was delivered."""
        delivered = []
        for r in due(self.data_dir, self.now()):
            try:
                self.on_due(r)
            except Exception as exc:  # not delivered: it stays pending
                log.warning("reminder %s not delivered: %s", r["id"], exc)
                continue
            self._desktop(r)
            delivered.append(set_status(self.data_dir, r["id"], "fired"))
        return delivered

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # a broken personal.db must not kill the app
                log.warning("reminders: %s", exc)
            self._stop.wait(self.every_s)

    def _desktop(self, r: dict[str, Any]) -> None:
        if self.desktop:
            try:
                subprocess.run(
                    ["notify-send", "macaron: reminder", f"{r['text']} ({r['at']})"],
                    timeout=5,
                    check=False,
                    capture_output=True,
                )
            except (OSError, subprocess.SubprocessError):
                pass
