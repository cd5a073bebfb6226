"""open_db and migrations: settings, named append-only migrations, idempotence, concurrency."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store import MIGRATIONS, migrate, open_db
from macaron_local.store.migrations import applied


def test_open_db_creates_folder_and_sets_pragmas(db_path: Path) -> None:
    assert not db_path.parent.exists()
    db = open_db(db_path)
    assert db_path.exists()
    assert db.journal_mode == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    expected = {"sessions", "turns", "summaries", "tool_calls", "hcp_approvals", "_migrations"}
    assert expected <= set(db.table_names())
    assert {"turns_fts", "sessions_fts"} <= set(db.table_names())


def test_migrations_are_recorded_once(db_path: Path) -> None:
    db = open_db(db_path)
    names = [fn.__name__ for fn in MIGRATIONS]
    assert names[0] == "m001_initial"
    assert applied(db) == names
    first = list(db.query("SELECT name, applied_at FROM _migrations ORDER BY name"))
    db.close()

    again = open_db(db_path)
    assert migrate(again) == []
    assert list(again.query("SELECT name, applied_at FROM _migrations ORDER BY name")) == first


def test_appended_migration_runs_once(db: sqlite_utils.Database) -> None:
    def m002_add_pins(database: sqlite_utils.Database) -> None:
        database.execute("ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0")

    steps = (*MIGRATIONS, m002_add_pins)
    assert migrate(db, steps) == ["m002_add_pins"]
    assert migrate(db, steps) == []
    assert "pinned" in db["sessions"].columns_dict
    assert applied(db)[-1] == "m002_add_pins"


def test_failed_migration_changes_nothing(db: sqlite_utils.Database) -> None:
    def m002_broken(database: sqlite_utils.Database) -> None:
        database.execute("CREATE TABLE half_done (x INTEGER)")
        database.execute("THIS IS NOT SQL")

    with pytest.raises(StoreError, match="rolled back"):
        migrate(db, (*MIGRATIONS, m002_broken))
    assert "half_done" not in db.table_names()
    assert "m002_broken" not in applied(db)


def test_database_from_a_newer_version_is_refused(db_path: Path) -> None:
    db = open_db(db_path)
    db.execute("INSERT INTO _migrations (name, applied_at) VALUES ('m999_future', 'x')")
    db.close()
    with pytest.raises(StoreError, match="m999_future"):
        open_db(db_path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError, match="cannot open the store"):
        open_db(path)


def test_concurrent_first_open_applies_each_migration_once(db_path: Path) -> None:
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            barrier.wait()
            open_db(db_path).close()
        except BaseException as exc:  # collected and asserted on below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    db = open_db(db_path)
    assert applied(db) == [fn.__name__ for fn in MIGRATIONS]
