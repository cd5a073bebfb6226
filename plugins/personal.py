"""Bundled plugin: the user's notes and todos, kept in ``personal.db`` under the data folder.

Registers ``notes.add``, ``notes.search``, ``todos.add``, ``todos.list`` and ``todos.done``
exactly as docs/formats.md describes them. It must not touch files outside the data folder.
"""

from __future__ import annotations

import json
from typing import Any

from macaron_local.agent.dates import parse_due
from macaron_local.agent.personal import note, personal_db, todo
from macaron_local.agent.tools import tool_context
from macaron_local.plugins import hookimpl

TODO_STATUSES = ("open", "done", "overdue")


def notes_add(text: str, tags: list[str] | None = None) -> dict[str, Any]:
    """Save a note (notes cannot be edited; add a new one)."""
    ctx = tool_context()
    tags = [str(t) for t in (tags or [])]
    created = ctx.now().strftime("%Y-%m-%dT%H:%M")
    with personal_db(ctx.data_dir) as db:
        cur = db.execute(
            "INSERT INTO notes (text, tags, created) VALUES (?, ?, ?)",
            (str(text), json.dumps(tags), created),
        )
        return note(db.execute("SELECT * FROM notes WHERE id = ?", (cur.lastrowid,)).fetchone())


def notes_search(query: str = "") -> list[dict[str, Any]]:
    """Notes whose text or tags hold every word of ``query``; ``tag:x`` restricts to a tag."""
    words = str(query).lower().split()
    tags = [w[4:] for w in words if w.startswith("tag:")]
    words = [w for w in words if not w.startswith("tag:")]
    with personal_db(tool_context().data_dir) as db:
        rows = [note(r) for r in db.execute("SELECT * FROM notes ORDER BY id")]
    out = []
    for n in rows:
        low_tags = [t.lower() for t in n["tags"]]
        hay = n["text"].lower() + " " + " ".join(low_tags)
        if all(t in low_tags for t in tags) and all(w in hay for w in words):
            out.append(n)
    return out


def todos_add(
    title: str, due: str | None = None, estimate_h: float | None = None
) -> dict[str, Any]:
    """Add an open todo; ``due`` accepts 'YYYY-MM-DD', 'today', 'tomorrow' or a weekday."""
    ctx = tool_context()
    day = parse_due(due, ctx.now())
    est = float(estimate_h) if estimate_h is not None else None
    with personal_db(ctx.data_dir) as db:
        cur = db.execute(
            "INSERT INTO todos (title, due, estimate_h) VALUES (?, ?, ?)", (str(title), day, est)
        )
        return todo(db.execute("SELECT * FROM todos WHERE id = ?", (cur.lastrowid,)).fetchone())


def todos_list(status: str = "open") -> list[dict[str, Any]]:
    """Todos by status: 'open', 'done' or 'overdue' (open with a due date before today)."""
    if status not in TODO_STATUSES:
        raise ValueError(f"unknown status {status!r} (use 'open', 'done' or 'overdue')")
    ctx = tool_context()
    today = ctx.now().date().isoformat()
    with personal_db(ctx.data_dir) as db:
        if status == "overdue":
            rows = db.execute(
                "SELECT * FROM todos WHERE status = 'open' AND due IS NOT NULL "
                "AND due < ? ORDER BY id",
                (today,),
            )
        else:
            rows = db.execute("SELECT * FROM todos WHERE status = ? ORDER BY id", (status,))
        return [todo(r) for r in rows]


def todos_done(id: int) -> dict[str, Any]:  # the documented argument name
    """Mark a todo done; KeyError for an unknown id."""
    with personal_db(tool_context().data_dir) as db:
        if db.execute("SELECT 1 FROM todos WHERE id = ?", (int(id),)).fetchone() is None:
            raise KeyError(id)
        db.execute("UPDATE todos SET status = 'done' WHERE id = ?", (int(id),))
        return todo(db.execute("SELECT * FROM todos WHERE id = ?", (int(id),)).fetchone())


@hookimpl
def register_tools(register: Any) -> None:
    register.module("notes", "save, search and read the user's notes")
    register.module(
        "todos", "add, list, complete and total the user's todos (due dates, estimates)"
    )
    register(notes_add, name="notes.add", side_effect=True)
    register(notes_search, name="notes.search")
    register(todos_add, name="todos.add", side_effect=True)
    register(todos_list, name="todos.list")
    register(todos_done, name="todos.done", side_effect=True)
