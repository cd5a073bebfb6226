"""Human approval of security-relevant profile changes, recorded in the store.

Owns the serve-time gate: a profile whose semantic diff against its *baseline* has
security-relevant changes is refused (:class:`ApprovalRequiredError`) unless a human approved
that exact content hash with ``macaron hcp approve``. The baseline is the bundled profile of the
same id, else the bundled profile reached by following ``extends``; a profile with neither has
no baseline and always needs an approval. Bundled profiles as shipped need none. Storage
functions take the database (``macaron_local.store.db.open_db``); the entry point opens it.
Must not: open the database itself or resolve its path.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import sqlite_utils

from macaron_local.errors import ApprovalRequiredError, ContractError, StoreError
from macaron_local.hcp.diff import Change, security_changes
from macaron_local.hcp.loader import find_parent, find_profile, load_bundled, load_file
from macaron_local.hcp.schema import Profile

TABLE = "hcp_approvals"
_MAX_CHAIN = 16


@dataclass(frozen=True)
class Approval:
    """One row of ``hcp_approvals``."""

    profile_id: str
    content_hash: str
    approved_by: str
    approved_at: str
    note: str | None


def baseline_for(profile: Profile) -> Profile | None:
    """The bundled profile ``profile`` is judged against (None: it has no baseline)."""
    current = profile
    for _ in range(_MAX_CHAIN):
        if _is_bundled_name(current.id):
            return load_bundled(current.id)
        if current.extends is None:
            return None
        current = load_file(find_parent(current.source, current.extends))
    raise ContractError("extends chain too long", where="extends", path=profile.source)


def _is_bundled_name(name: str) -> bool:
    try:
        find_profile(name, bundled_only=True)
    except ContractError:
        return False
    return True


def required_changes(profile: Profile) -> list[Change]:
    """The security-relevant changes of ``profile`` against its baseline (approved or not)."""
    baseline = baseline_for(profile)
    if baseline is None:
        return [
            Change(
                "profile.id",
                None,
                profile.id,
                True,
                "a profile that neither is nor extends a bundled profile: everything is new",
            )
        ]
    return security_changes(baseline, profile)


def pending_changes(db: sqlite_utils.Database, profile: Profile) -> list[Change]:
    """The changes still waiting for an approval (empty: the profile may be served)."""
    changes = required_changes(profile)
    if not changes or is_approved(db, profile):
        return []
    return changes


def check_approved(db: sqlite_utils.Database, profile: Profile) -> None:
    """Refuse to serve a profile with unapproved security-relevant changes."""
    changes = pending_changes(db, profile)
    if changes:
        listing = "; ".join(f"{c.path}: {c.reason}" for c in changes)
        raise ApprovalRequiredError(
            f"profile {profile.id!r} ({profile.content_hash[:12]}) has security-relevant "
            f"changes that nobody approved: {listing}",
            path=profile.source,
            where=changes[0].path,
            hint=f"review them with `macaron hcp diff` and run `macaron hcp approve {profile.id}`",
        )


def is_approved(db: sqlite_utils.Database, profile: Profile) -> bool:
    rows = _query(
        db,
        f"SELECT 1 FROM {TABLE} WHERE profile_id = ? AND content_hash = ? LIMIT 1",
        [profile.id, profile.content_hash],
    )
    return bool(rows)


def approve(
    db: sqlite_utils.Database, profile: Profile, who: str, note: str | None = None
) -> Approval:
    """Record that ``who`` approved this exact content hash of ``profile``."""
    from macaron_local.store.db import now, ts, write_txn

    if not who.strip():
        raise ContractError("an approval needs the name of the person who approves")
    record = Approval(profile.id, profile.content_hash, who.strip(), ts(now()), note or None)
    with write_txn(db) as txn:
        txn.execute(
            f"INSERT INTO {TABLE} (profile_id, content_hash, approved_by, approved_at, note) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                record.profile_id,
                record.content_hash,
                record.approved_by,
                record.approved_at,
                record.note,
            ],
        )
    return record


def approvals(db: sqlite_utils.Database, profile_id: str | None = None) -> list[Approval]:
    """Recorded approvals, oldest first (all profiles, or one)."""
    sql = f"SELECT profile_id, content_hash, approved_by, approved_at, note FROM {TABLE}"
    params: list[str] = []
    if profile_id is not None:
        sql += " WHERE profile_id = ?"
        params.append(profile_id)
    return [Approval(*row) for row in _query(db, sql + " ORDER BY approved_at, id", params)]


def _query(db: sqlite_utils.Database, sql: str, params: list[str]) -> list[tuple[str, ...]]:
    try:
        return list(db.execute(sql, params).fetchall())
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {TABLE}: {exc}", hint="is the store migrated?") from exc
