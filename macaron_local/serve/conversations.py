"""``X-Conversation-Id`` -> store session, remembered across server restarts.

Owns a small SQLite file of its own (``<data>/serve/conversations.db``) mapping client-chosen
conversation ids to sessions, and one lock per conversation so its turns run one after the other
(two turns racing on one session head would make one of them fail). A conversation id that is
already a session id in the store continues that session (a client can pick up a TUI session).
Must not: write sessions or turns itself (the runtime does).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from macaron_local import paths
from macaron_local.errors import StoreError

CONVERSATION_RE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,200}$")


def conversations_path() -> Path:
    return paths.data_dir() / "serve" / "conversations.db"


def valid_conversation_id(value: str) -> bool:
    return bool(CONVERSATION_RE.match(value))


class Conversations:
    """The mapping and the per-conversation locks (thread-safe)."""

    def __init__(self, path: Path) -> None:
        paths.ensure(path.parent)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS conversations ("
            " id TEXT PRIMARY KEY, session_id TEXT NOT NULL,"
            " created_at TEXT NOT NULL DEFAULT (datetime('now')))"
        )
        self._lock = threading.Lock()
        self._turn_locks: dict[str, threading.Lock] = {}

    def turn_lock(self, conversation: str) -> threading.Lock:
        with self._lock:
            return self._turn_locks.setdefault(conversation, threading.Lock())

    def session_for(
        self,
        conversation: str,
        *,
        exists: Callable[[str], bool],
        create: Callable[[str], str],
    ) -> str:
        """The session of ``conversation``, made with ``create(title)`` the first time.

        ``exists(session_id)`` says whether a live session has that id; a mapping to a session
        that was deleted since starts a new one.
        """
        with self._lock:
            row = self._db.execute(
                "SELECT session_id FROM conversations WHERE id = ?", [conversation]
            ).fetchone()
        if row and exists(row[0]):
            return str(row[0])
        if exists(conversation):
            return conversation
        session_id = create(f"API · {conversation}"[:80])
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO conversations (id, session_id) VALUES (?, ?)",
                [conversation, session_id],
            )
        return session_id

    def mapping(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT id, session_id FROM conversations").fetchall())

    def close(self) -> None:
        with self._lock:
            self._db.close()


def session_exists(get_session: Callable[[str], object]) -> Callable[[str], bool]:
    """An ``exists`` check from the store's ``get_session`` (deleted sessions do not count)."""

    def exists(session_id: str) -> bool:
        try:
            record = get_session(session_id)
        except StoreError:
            return False
        return getattr(record, "deleted_at", None) is None

    return exists
