"""Named, append-only schema migrations, recorded in ``_migrations(name, applied_at)``.

Owns: the schema. ``MIGRATIONS`` is applied in order; each function runs once per database, in
its own write transaction together with the row that records it, so a crash mid-migration leaves
the database as it was before. To change the schema, append ``m00N_what`` to ``MIGRATIONS``;
never edit or reorder one that has shipped (see docs/store.md). Must not: hold data logic.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store.db import now, ts, write_txn

Migration = Callable[[sqlite_utils.Database], None]


def m001_initial(db: sqlite_utils.Database) -> None:
    """Sessions, turns (a tree per session), summaries, tool calls, HCP approvals, FTS."""
    db.executescript(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            head_turn_id TEXT REFERENCES turns(id) ON DELETE SET NULL,
            profile_id TEXT,
            exclude_from_learning INTEGER NOT NULL DEFAULT 0
                CHECK (exclude_from_learning IN (0, 1)),
            deleted_at TEXT
        );
        CREATE TABLE turns (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            -- no cascade on parent_id: a cascade down a long branch would nest one trigger
            -- level per turn and hit SQLite's recursion limit; sessions delete all turns at once
            parent_id TEXT REFERENCES turns(id),
            created_at TEXT NOT NULL,
            request TEXT NOT NULL,
            answer TEXT NOT NULL,
            label TEXT NOT NULL,
            route_kind TEXT NOT NULL
                CHECK (route_kind IN ('auto', 'sticky', 'manual', 'fallback')),
            route_probs TEXT NOT NULL DEFAULT '{}',
            adapter_revision TEXT NOT NULL,
            profile_hash TEXT NOT NULL,
            backend TEXT NOT NULL DEFAULT 'local' CHECK (backend IN ('local', 'remote')),
            failover_reason TEXT,
            timings TEXT NOT NULL DEFAULT '{}',
            tokens TEXT NOT NULL DEFAULT '{}',
            compacted INTEGER NOT NULL DEFAULT 0 CHECK (compacted IN (0, 1)),
            tool_result_of TEXT REFERENCES turns(id) ON DELETE SET NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX turns_session ON turns(session_id, created_at);
        CREATE INDEX turns_parent ON turns(parent_id);
        CREATE INDEX turns_tool_result_of ON turns(tool_result_of);
        CREATE TABLE summaries (
            turn_id TEXT PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
            label TEXT NOT NULL,
            text TEXT NOT NULL,
            n_tokens INTEGER NOT NULL CHECK (n_tokens >= 0),
            adapter_revision TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE tool_calls (
            id TEXT PRIMARY KEY,
            turn_id TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
            step INTEGER NOT NULL CHECK (step >= 0),
            label TEXT NOT NULL,
            code TEXT NOT NULL,
            result TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status <> ''),
            created_at TEXT NOT NULL,
            UNIQUE (turn_id, step)
        );
        CREATE TABLE hcp_approvals (
            id INTEGER PRIMARY KEY,
            profile_id TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            approved_by TEXT NOT NULL,
            approved_at TEXT NOT NULL,
            note TEXT
        );
        CREATE INDEX hcp_approvals_lookup ON hcp_approvals(profile_id, content_hash);
        """
    )
    db.table("turns").enable_fts(["request", "answer"], create_triggers=True)
    db.table("sessions").enable_fts(["title"], create_triggers=True)


def m002_experience(db: sqlite_utils.Database) -> None:
    """The opt-in experience log: one redacted row per learned-from turn, plus its signals.

    Rows cascade with their turn (deleting a chat deletes what was learned from it). The
    ``experience`` package owns the data logic; this only creates the tables.
    """
    db.executescript(
        """
        CREATE TABLE experience (
            id TEXT PRIMARY KEY,
            turn_id TEXT NOT NULL UNIQUE REFERENCES turns(id) ON DELETE CASCADE,
            session_id TEXT NOT NULL,
            parent_id TEXT,
            created_at TEXT NOT NULL,
            request TEXT NOT NULL,
            answer TEXT NOT NULL,
            label TEXT NOT NULL,
            route_kind TEXT NOT NULL,
            adapter_revision TEXT NOT NULL,
            profile_hash TEXT NOT NULL,
            tool_outcomes TEXT NOT NULL DEFAULT '[]',
            checker TEXT,
            redactions INTEGER NOT NULL DEFAULT 0 CHECK (redactions >= 0)
        );
        CREATE INDEX experience_label ON experience(label, created_at);
        CREATE INDEX experience_session ON experience(session_id);
        CREATE TABLE experience_signals (
            id TEXT PRIMARY KEY,
            experience_id TEXT NOT NULL REFERENCES experience(id) ON DELETE CASCADE,
            kind TEXT NOT NULL
                CHECK (kind IN ('up', 'down', 'correction', 'retry', 'reroute')),
            value TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE INDEX experience_signals_of ON experience_signals(experience_id);
        """
    )


def m003_ui_state(db: sqlite_utils.Database) -> None:
    """What the user did in a generated UI, kept with the turn that drew it: the components'
    values (JSON, component id -> value) and the submissions of forms nothing else handles
    (JSON list). Cascades with the turn; NoAI values are never written (the facade drops them).
    """
    db.executescript(
        """
        CREATE TABLE ui_state (
            turn_id TEXT PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
            vals TEXT NOT NULL DEFAULT '{}',
            submissions TEXT NOT NULL DEFAULT '[]',
            updated_at TEXT NOT NULL
        );
        """
    )


MIGRATIONS: tuple[Migration, ...] = (m001_initial, m002_experience, m003_ui_state)


def _ensure_table(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )


def applied(db: sqlite_utils.Database) -> list[str]:
    """Names of the migrations recorded in this database, in the order they were applied."""
    _ensure_table(db)
    rows = db.execute("SELECT name FROM _migrations ORDER BY applied_at, rowid").fetchall()
    return [name for (name,) in rows]


def migrate(db: sqlite_utils.Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    """Apply the migrations this database lacks; return the names applied now (often none).

    Safe against concurrent openers: each step re-checks the record under the write lock.
    """
    known = {fn.__name__ for fn in migrations}
    unknown = [name for name in applied(db) if name not in known]
    if unknown:
        raise StoreError(
            f"the store has migrations this version does not know: {', '.join(unknown)}",
            hint="it was written by a newer macaron-local; upgrade to open it",
        )
    done: list[str] = []
    for fn in migrations:
        name = fn.__name__
        if name in applied(db):
            continue
        with write_txn(db):
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone():
                continue
            fn(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", [name, ts(now())]
            )
        done.append(name)
    return done
