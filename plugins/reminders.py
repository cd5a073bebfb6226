"""Bundled plugin: reminders at a date and time, kept in ``personal.db``.

Registers ``reminders.add`` and ``reminders.list``; this plugin only stores them. They fire
through the runtime's clock (``macaron_local/agent/reminders.py``: the app shows each as a
notification when it falls due, missed ones at the next start) and ``macaron reminders``
lists them, marks them done or snoozes them from the shell.
"""

from __future__ import annotations

from typing import Any

from macaron_local.agent.dates import parse_at
from macaron_local.agent.personal import personal_db, reminder
from macaron_local.agent.tools import tool_context
from macaron_local.plugins import hookimpl


def reminders_add(text: str, at: str) -> dict[str, Any]:
    """Set a reminder; ``at`` is 'YYYY-MM-DDTHH:MM', 'today HH:MM', '<weekday> HH:MM', 'in 2h'."""
    ctx = tool_context()
    now = ctx.now()
    when = parse_at(at, now)
    if when < now.strftime("%Y-%m-%dT%H:%M"):  # it would fire at once: a misread time
        raise ValueError(f"{when} has already passed (it is {now:%Y-%m-%dT%H:%M}); nothing was set")
    with personal_db(ctx.data_dir) as db:
        cur = db.execute("INSERT INTO reminders (text, at) VALUES (?, ?)", (str(text), when))
        row = db.execute("SELECT * FROM reminders WHERE id = ?", (cur.lastrowid,)).fetchone()
        return reminder(row)


def reminders_list() -> list[dict[str, Any]]:
    """Pending reminders, sorted by time."""
    with personal_db(tool_context().data_dir) as db:
        rows = db.execute("SELECT * FROM reminders WHERE status = 'pending' ORDER BY at, id")
        return [reminder(r) for r in rows]


@hookimpl
def register_tools(register: Any) -> None:
    register.module("reminders", "set and list reminders at a date and time")
    register(reminders_add, name="reminders.add", side_effect=True)
    register(reminders_list, name="reminders.list")
