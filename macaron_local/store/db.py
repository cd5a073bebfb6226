"""Opening the SQLite store and the write-transaction helper every writer uses.

Owns: the connection settings (WAL, foreign keys, busy timeout, synchronous=FULL), running the
migrations on open, ``write_txn`` (``BEGIN IMMEDIATE`` ... ``COMMIT``), sortable ids and
timestamps, and turning text SQLite cannot store (lone surrogates) into a StoreError. Must not:
resolve the default database path (the entry point does, with
``paths.db_path()``), open anything at import time, or hold a module-level connection.

Threads: **one connection per thread.** ``open_db`` is cheap after the first call (the migration
check is one query), so each thread that touches the store (the UI worker, the background summary
worker) opens its own. The connection keeps ``check_same_thread=True`` so sharing one by mistake
fails loudly. Why not one shared connection with ``check_same_thread=False`` and a lock: the
transaction state of a ``sqlite3.Connection`` is per connection, so a write from thread B while
thread A is inside ``commit_turn`` would silently join (and commit or roll back with) A's
transaction, unless every read and write took the same lock, which would serialise readers too.
With one connection per thread, WAL lets readers run beside the single writer, and writers queue
on SQLite's own lock (``BEGIN IMMEDIATE`` + busy timeout), which also works across processes.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from macaron_local.errors import StoreError

BUSY_TIMEOUT_S = 10.0

_id_lock = threading.Lock()
_last_id_us = [0]


def open_db(path: Path) -> sqlite_utils.Database:
    """Open (creating if needed) the store at ``path`` and bring its schema up to date.

    Creates the parent folder, turns on WAL, foreign keys and a busy timeout, and applies any
    migration not yet recorded in ``_migrations``. Returns a connection for the calling thread
    only (see the module docstring). Raises :class:`StoreError` if the file is not a usable
    SQLite database or was written by a newer version.
    """
    from macaron_local.store.migrations import migrate

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
        db = sqlite_utils.Database(conn, execute_plugins=False)
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        db.execute("PRAGMA foreign_keys = ON")
        _enable_wal(db)
        # FULL: a committed turn survives power loss too; one fsync per turn is cheap.
        db.execute("PRAGMA synchronous = FULL")
        migrate(db)
    except sqlite3.Error as exc:
        raise StoreError(
            f"cannot open the store {path}: {exc}",
            hint="move the file aside to start a fresh store, or restore a backup",
        ) from exc
    except OSError as exc:
        raise StoreError(f"cannot create the store folder {path.parent}: {exc}") from exc
    return db


def _enable_wal(db: sqlite_utils.Database) -> None:
    """Switch to WAL (persistent: only a new file needs it), retrying while others hold locks.

    The journal-mode change can fail with "database is locked" without waiting on the busy
    handler when another connection is opening the same new file at the same moment.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.enable_wal()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@contextmanager
def write_txn(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One write transaction: ``BEGIN IMMEDIATE``, then ``COMMIT``, or ``ROLLBACK`` on any error.

    IMMEDIATE takes the write lock up front, so the checks done inside (the expected head, the
    turn's existence) still hold at commit, and a busy database waits the busy timeout instead of
    failing on a read-to-write upgrade. SQLite errors leave as :class:`StoreError`.
    """
    conn = db.conn
    if conn.in_transaction:
        raise StoreError("a store write was started inside another open transaction")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot start a store transaction: {exc}") from exc
    try:
        yield db
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"store write failed and was rolled back: {exc}") from exc
        if isinstance(exc, UnicodeEncodeError):  # a lone surrogate cannot be stored as UTF-8
            raise StoreError(
                "the text is not valid Unicode (a lone surrogate at character "
                f"{exc.start}); nothing was saved",
                hint="remove the broken character and try again",
            ) from exc
        raise


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not storable Unicode (a lone surrogate, from undecodable bytes or a JSON
    escape), or None when it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate at character {exc.start}"
    return None


def new_id() -> str:
    """A sortable id: 14 hex digits of microseconds since the epoch, then 10 random hex digits.

    Ids made by one process are strictly increasing, so ``ORDER BY id`` is creation order.
    """
    with _id_lock:
        now_us = max(time.time_ns() // 1000, _last_id_us[0] + 1)
        _last_id_us[0] = now_us
    return f"{now_us:014x}{secrets.token_hex(5)}"


def now() -> datetime:
    """The current time, UTC."""
    return datetime.now(UTC)


def ts(moment: datetime) -> str:
    """How a time is stored: UTC ISO-8601 with microseconds, so text order is time order."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
