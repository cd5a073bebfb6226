"""Parsing the dates and times the agent tools accept (docs/formats.md, "L1 REPL format").

Owns ``parse_due`` (``'YYYY-MM-DD'``, ``today``, ``tomorrow``, ``mon``..``sun``) and
``parse_at`` (absolute, ``today HH:MM``, ``<weekday> HH:MM``, ``in 20m``/``in 2h``/``in 3d``).
Pure functions of the text and ``now``; it must not read the clock itself.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_IN = re.compile(r"^in\s+(\d+)\s*(m|min|mins|h|hr|hrs|d|day|days)$")


def parse_due(text: str | None, now: datetime) -> str | None:
    """A due date as ``'YYYY-MM-DD'``; raises ValueError naming the accepted forms."""
    if text is None:
        return None
    return _day(str(text).strip().lower(), now.date()).isoformat()


def _day(text: str, today: date) -> date:
    if text == "today":
        return today
    if text == "tomorrow":
        return today + timedelta(days=1)
    key = text[:3]
    if key in WEEKDAYS and (len(text) == 3 or text.startswith(key) and text.isalpha()):
        ahead = (WEEKDAYS.index(key) - today.weekday() - 1) % 7 + 1
        return today + timedelta(days=ahead)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"unknown date {text!r} (use 'YYYY-MM-DD', 'today', 'tomorrow' "
            "or a weekday 'mon'..'sun')"
        ) from None


def parse_at(text: str, now: datetime) -> str:
    """A reminder time as ``'YYYY-MM-DDTHH:MM'``; raises ValueError naming the forms."""
    raw = str(text).strip().lower()
    if m := _IN.match(raw):
        n, unit = int(m.group(1)), m.group(2)[0]
        delta = {"m": timedelta(minutes=n), "h": timedelta(hours=n), "d": timedelta(days=n)}[unit]
        return (now + delta).strftime("%Y-%m-%dT%H:%M")
    try:
        return datetime.fromisoformat(raw.replace(" ", "T", 1)).strftime("%Y-%m-%dT%H:%M")
    except ValueError:
        pass
    day, _, clock = raw.partition(" ")
    try:
        hh, mm = (int(x) for x in clock.split(":"))
        return (
            datetime.combine(_day(day, now.date()), datetime.min.time())
            .replace(hour=hh, minute=mm)
            .strftime("%Y-%m-%dT%H:%M")
        )
    except ValueError:
        raise ValueError(
            f"unknown time {text!r} (use 'YYYY-MM-DDTHH:MM', 'today HH:MM', "
            "'tomorrow HH:MM', '<weekday> HH:MM' or 'in 20m' / 'in 2h' / 'in 3d')"
        ) from None
