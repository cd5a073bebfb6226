"""Revisions are immutable and content-addressed; promote/rollback move only the policy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from macaron_local import lineage, paths
from macaron_local.engine.lora_io import write_lora
from macaron_local.errors import RefineError
from macaron_local.manifests import sha256_file


def _adapter(folder: Path, name: str, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 576)).astype(np.float32)
    b = rng.standard_normal((576, 2)).astype(np.float32)
    return write_lora(folder / name, {"blk.0.attn_q.weight": (a, b)}, alpha=4)


@pytest.fixture
def revs(tmp_path: Path) -> list[lineage.Revision]:
    out = []
    parent = None
    for i in range(3):
        rev = lineage.register_revision(
            _adapter(tmp_path, f"a{i}.gguf", i),
            label="L0",
            parent=parent,
            data_hash="d" * 64,
            config={"rank": 2},
            metrics={"final_loss": 1.0 / (i + 1)},
        )
        parent = rev.revision
        out.append(rev)
    return out


def test_register_is_content_addressed_and_idempotent(tmp_path: Path, revs) -> None:
    src = tmp_path / "a0.gguf"
    assert revs[0].revision == sha256_file(src)
    assert revs[0].path == paths.data_dir() / "adapters" / f"{revs[0].revision}.gguf"
    assert revs[0].path.read_bytes() == src.read_bytes()
    again = lineage.register_revision(src, label="L0", metrics={"other": 1})
    assert again == revs[0]  # the stored record is never rewritten
    meta = json.loads((paths.data_dir() / "adapters" / f"{revs[1].revision}.json").read_text())
    assert meta["parent"] == revs[0].revision and meta["label"] == "L0"
    assert [r.revision for r in lineage.list_revisions("L0")] == [r.revision for r in revs]
    assert lineage.list_revisions("L3") == []


def test_promote_and_rollback_move_only_the_policy(revs) -> None:
    before = lineage.store_snapshot()
    assert lineage.get_policy("tall-local").serving == {}
    lineage.promote("tall-local", "L0", revs[0].revision[:10])
    lineage.promote("tall-local", "L0", revs[2].revision)
    assert lineage.get_policy("tall-local").serving == {"L0": revs[2].revision}
    assert lineage.serving_path("tall-local", "L0") == revs[2].path
    policy = lineage.rollback("tall-local", "L0")
    assert policy.serving == {"L0": revs[0].revision}
    policy = lineage.rollback("tall-local", "L0")
    assert policy.serving == {}  # back to the profile's own default
    with pytest.raises(RefineError, match="nothing to roll back"):
        lineage.rollback("tall-local", "L0")
    assert [e.action for e in policy.history] == ["promote", "promote", "rollback", "rollback"]
    assert lineage.store_snapshot() == before  # revision files are byte-identical
    policy_dir = paths.data_dir() / "policy"
    assert sorted(p.name for p in policy_dir.iterdir()) == ["tall-local.json"]  # no tmp left


def test_policies_are_per_profile(revs) -> None:
    lineage.promote("tall-local", "L0", revs[1].revision)
    assert lineage.get_policy("hybrid").serving == {}


def test_promote_checks_the_revision(revs) -> None:
    with pytest.raises(RefineError, match="trained for L0"):
        lineage.promote("tall-local", "L1", revs[0].revision)
    with pytest.raises(RefineError, match="no adapter revision"):
        lineage.promote("tall-local", "L0", "0" * 64)
    with pytest.raises(RefineError, match="too short"):
        lineage.promote("tall-local", "L0", "ab")
