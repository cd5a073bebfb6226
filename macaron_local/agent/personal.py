"""The personal data the bundled plugins keep: notes, todos and reminders in ``personal.db``.

Owns the SQLite file ``<data_dir>/personal.db`` (schema created on first use) and the record
shapes the tools return (docs/formats.md, "Tool API"). It must not decide what the agent may
call (the gate does) and opens nothing at import time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS todos (id INTEGER PRIMARY KEY, title TEXT NOT NULL, due TEXT,
    estimate_h REAL, status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')));
CREATE TABLE IF NOT EXISTS reminders (id INTEGER PRIMARY KEY, text TEXT NOT NULL,
    at TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending');
"""


def db_file(data_dir: Path) -> Path:
    return data_dir / "personal.db"


def connect(data_dir: Path) -> sqlite3.Connection:
    """Open (and create) the personal database; rows come back as ``sqlite3.Row``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_file(data_dir), timeout=10)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    return conn


@contextmanager
def personal_db(data_dir: Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success and is always closed."""
    conn = connect(data_dir)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


def note(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "text": row["text"],
        "tags": json.loads(row["tags"]),
        "created": row["created"],
    }


def todo(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "title": row["title"],
        "due": row["due"],
        "estimate_h": row["estimate_h"],
        "status": row["status"],
    }


def reminder(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "text": row["text"], "at": row["at"]}
