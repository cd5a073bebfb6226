"""Hot reload with real file edits: a good edit is picked up, a broken one keeps the old profile."""

from __future__ import annotations

import os
import queue
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w

from macaron_local.errors import ApprovalRequiredError, ContractError
from macaron_local.hcp import ProfileWatcher, check_approved

WAIT_S = 30.0  # an upper bound for a slow, shared machine; not a timing assertion


def _save(path: Path, doc: dict[str, Any] | str) -> None:
    """Save the way editors do: write a temporary file, then rename it over the profile."""
    tmp = path.with_suffix(".swp")
    tmp.write_text(doc if isinstance(doc, str) else tomli_w.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


def _wait_for(q: queue.Queue, accept: Callable[[Any], bool]) -> Any:
    """The first queued item that ``accept`` takes, within WAIT_S (earlier ones are skipped)."""
    while True:
        item = q.get(timeout=WAIT_S)
        if accept(item):
            return item


def test_reload_picks_up_edits_and_survives_broken_ones(write_user, bundled_doc) -> None:
    path = write_user("tall-local", bundled_doc())
    changes: queue.Queue = queue.Queue()
    errors: queue.Queue = queue.Queue()
    with ProfileWatcher("tall-local", changes.put, errors.put) as watcher:
        assert watcher.current is not None and watcher.current.resources.n_ctx == 4096
        doc = bundled_doc()
        doc["resources"]["n_ctx"] = 2048
        _save(path, doc)
        new = _wait_for(changes, lambda p: p.resources.n_ctx == 2048)
        assert watcher.current is new

        _save(path, "schema_version = 1\n[profile\nid = 'x'\n")
        err = _wait_for(errors, lambda e: e.where == "line 2")
        assert isinstance(err, ContractError) and err.path == path
        assert watcher.current is new  # the previous profile is kept

        doc["router"]["fallback"] = "L7"
        _save(path, doc)
        err = _wait_for(errors, lambda e: e.where == "router.fallback")
        assert watcher.current is new

        doc["router"]["fallback"] = "L0"
        doc["resources"]["n_ctx"] = 1024
        _save(path, doc)
        assert _wait_for(changes, lambda p: p.resources.n_ctx == 1024) is watcher.current


def test_editing_the_parent_reloads_the_child(write_user) -> None:
    parent = write_user(
        "parent",
        {"schema_version": 1, "extends": "tall-local", "profile": {"id": "parent", "version": "1"}},
    )
    write_user(
        "child",
        {"schema_version": 1, "extends": "parent", "profile": {"id": "child", "version": "1"}},
    )
    changes: queue.Queue = queue.Queue()
    with ProfileWatcher("child", changes.put, lambda e: None) as watcher:
        assert watcher.current is not None and watcher.current.resources.threads == 0
        _save(
            parent,
            {
                "schema_version": 1,
                "extends": "tall-local",
                "profile": {"id": "parent", "version": "1"},
                "resources": {"threads": 3},
            },
        )
        child = _wait_for(changes, lambda p: p.resources.threads == 3)
        assert child.id == "child"


def test_unapproved_widening_is_reported_and_not_applied(write_user, tmp_path) -> None:
    from macaron_local.store.db import open_db

    store = tmp_path / "gate.db"
    open_db(store).close()

    def gate(profile) -> None:
        db = open_db(store)  # the check runs on the watcher's thread: its own connection
        try:
            check_approved(db, profile)
        finally:
            db.close()

    path = write_user(
        "mine",
        {"schema_version": 1, "extends": "tall-local", "profile": {"id": "mine", "version": "1"}},
    )
    errors: queue.Queue = queue.Queue()
    with ProfileWatcher("mine", lambda p: None, errors.put, check=gate) as watcher:
        before = watcher.current
        _save(
            path,
            {
                "schema_version": 1,
                "extends": "tall-local",
                "profile": {"id": "mine", "version": "1"},
                "tools": {"allow": {"L0": ["*"]}},
            },
        )
        err = _wait_for(errors, lambda e: isinstance(e, ApprovalRequiredError))
        assert "tools.allow.L0" in err.message
        assert watcher.current is before
