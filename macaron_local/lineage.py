"""Lineage: immutable adapter revisions and the one mutable pointer, the policy record.

Owns two folders under the data dir:

- ``adapters/<sha256>.gguf`` + ``<sha256>.json``: an *adapter revision*, content-addressed by the
  sha256 of its GGUF file, with its label, parent revision, training-data hash, profile hash,
  training config, evaluation metrics and creation time. Written once, never modified.
- ``policy/<profile_id>.json``: which revision serves each label of a profile, plus the history
  of promotions and rollbacks. Replaced atomically (tmp + rename) on every change.

Trainer checkpoints and optimizer state never come here (they live in the cache). Must not
import torch or llama.cpp.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from macaron_local import paths
from macaron_local.errors import RefineError
from macaron_local.manifests import sha256_file

if TYPE_CHECKING:
    from macaron_local.adapter_base import TrainingBase


class Revision(BaseModel):
    """One immutable adapter revision (the ``<sha256>.json`` beside its GGUF)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    revision: str  # sha256 of the GGUF file
    label: str
    parent: str | None = None
    base_sha256: str | None = None
    data_hash: str | None = None
    profile_hash: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    size: int
    created_at: str

    @property
    def path(self) -> Path:
        return adapters_dir() / f"{self.revision}.gguf"


class PolicyEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    action: str  # "promote" | "rollback"
    label: str
    revision: str | None  # what serves after the event (None: the profile's own default)
    previous: str | None
    at: str


class Policy(BaseModel):
    """Which revision serves each label of one profile; the only mutable lineage record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    profile_id: str
    serving: dict[str, str] = Field(default_factory=dict)
    history: list[PolicyEvent] = Field(default_factory=list)


def adapters_dir() -> Path:
    return paths.data_dir() / "adapters"


def policy_path(profile_id: str) -> Path:
    return paths.data_dir() / "policy" / f"{profile_id}.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _write_atomic(path: Path, text: str) -> None:
    paths.ensure(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def register_revision(
    gguf_path: Path | str,
    *,
    label: str,
    parent: str | None = None,
    base_sha256: str | None = None,
    data_hash: str | None = None,
    profile_hash: str | None = None,
    config: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
) -> Revision:
    """Copy an adapter into the store under its sha256; an existing revision is returned as is."""
    src = Path(gguf_path)
    if not src.is_file():
        raise RefineError(f"adapter file not found: {src}")
    sha = sha256_file(src)
    existing = get_revision(sha, missing_ok=True)
    if existing is not None:
        return existing
    rev = Revision(
        revision=sha,
        label=label,
        parent=parent,
        base_sha256=base_sha256,
        data_hash=data_hash,
        profile_hash=profile_hash,
        config=dict(config or {}),
        metrics=dict(metrics or {}),
        size=src.stat().st_size,
        created_at=_now(),
    )
    folder = paths.ensure(adapters_dir())
    tmp = folder / f".{sha}.gguf.part"
    shutil.copyfile(src, tmp)
    tmp.replace(rev.path)
    _write_atomic(folder / f"{sha}.json", rev.model_dump_json(indent=1))
    return rev


def get_revision(revision: str, *, missing_ok: bool = False) -> Revision | None:
    """A revision by its full sha256 or a unique prefix (at least 6 characters)."""
    folder = adapters_dir()
    if len(revision) < 6:
        raise RefineError(f"revision {revision!r} is too short; give at least 6 characters")
    found = sorted(folder.glob(f"{revision}*.json")) if folder.is_dir() else []
    if len(found) > 1:
        raise RefineError(f"revision prefix {revision!r} is ambiguous ({len(found)} matches)")
    if not found:
        if missing_ok:
            return None
        raise RefineError(
            f"no adapter revision {revision!r} in {folder}",
            hint="`macaron refine log` lists the revisions",
        )
    return Revision.model_validate_json(found[0].read_text(encoding="utf-8"))


def list_revisions(label: str | None = None) -> list[Revision]:
    """Every stored revision (optionally of one label), oldest first."""
    folder = adapters_dir()
    revs = (
        [
            Revision.model_validate_json(p.read_text(encoding="utf-8"))
            for p in sorted(folder.glob("*.json"))
        ]
        if folder.is_dir()
        else []
    )
    revs = [r for r in revs if label is None or r.label == label]
    return sorted(revs, key=lambda r: (r.created_at, r.revision))


def get_policy(profile_id: str) -> Policy:
    """The policy record of a profile (empty if none was written yet)."""
    path = policy_path(profile_id)
    if not path.is_file():
        return Policy(profile_id=profile_id)
    try:
        return Policy.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RefineError(f"corrupt policy record {path}: {exc}") from exc


def _save(policy: Policy) -> Policy:
    _write_atomic(policy_path(policy.profile_id), policy.model_dump_json(indent=1))
    return policy


def promote(
    profile_id: str, label: str, revision: str, *, base: TrainingBase | None = None
) -> Policy:
    """Make ``revision`` serve ``label``; only the policy record changes. A revision trained
    for another base than the profile's (``base``, else read from its manifest) is refused."""
    from macaron_local.adapter_base import check_adapter_base, profile_base

    rev = get_revision(revision)
    assert rev is not None
    if rev.label != label:
        raise RefineError(f"revision {rev.revision[:12]} was trained for {rev.label}, not {label}")
    check_adapter_base(
        f"revision {rev.revision[:12]} ({label})",
        base or profile_base(profile_id),
        base_sha256=rev.base_sha256,
        path=rev.path,
    )
    policy = get_policy(profile_id)
    previous = policy.serving.get(label)
    event = PolicyEvent(
        action="promote", label=label, revision=rev.revision, previous=previous, at=_now()
    )
    return _save(
        policy.model_copy(
            update={
                "serving": {**policy.serving, label: rev.revision},
                "history": [*policy.history, event],
            }
        )
    )


def _stack(policy: Policy, label: str) -> list[str]:
    """Replay the history of ``label``: promotions push, rollbacks pop."""
    stack: list[str] = []
    for ev in policy.history:
        if ev.label != label:
            continue
        if ev.action == "promote" and ev.revision:
            stack.append(ev.revision)
        elif ev.action == "rollback" and stack:
            stack.pop()
    return stack


def rollback(profile_id: str, label: str) -> Policy:
    """Serve the revision that served ``label`` before the current one (or the profile's
    default when the current one was the first promotion); only the policy record changes."""
    policy = get_policy(profile_id)
    stack = _stack(policy, label)
    if not stack:
        raise RefineError(f"nothing to roll back for {label} in profile {profile_id!r}")
    target = stack[-2] if len(stack) > 1 else None
    serving = {k: v for k, v in policy.serving.items() if k != label}
    if target is not None:
        serving[label] = target
    event = PolicyEvent(
        action="rollback", label=label, revision=target, previous=stack[-1], at=_now()
    )
    return _save(
        policy.model_copy(update={"serving": serving, "history": [*policy.history, event]})
    )


def serving_path(profile_id: str, label: str) -> Path | None:
    """The GGUF the policy serves for ``label``, or None to use the profile's default."""
    rev = get_policy(profile_id).serving.get(label)
    return get_revision(rev).path if rev else None  # type: ignore[union-attr]


def store_snapshot() -> dict[str, str]:
    """sha256 of every file in the adapters folder (tests use it to prove immutability)."""
    folder = adapters_dir()
    return {p.name: sha256_file(p) for p in sorted(folder.iterdir())} if folder.is_dir() else {}
