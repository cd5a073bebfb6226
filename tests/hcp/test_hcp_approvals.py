"""The approval gate: security-relevant changes are refused until a human approves the hash."""

from __future__ import annotations

import pytest

from macaron_local.errors import ApprovalRequiredError
from macaron_local.hcp import (
    approvals,
    approve,
    baseline_for,
    check_approved,
    dump_toml,
    load_bundled,
    load_profile,
    pending_changes,
)


def test_bundled_profiles_need_no_approval(db) -> None:
    for name in ("tall-local", "tall-gpu", "hybrid"):
        check_approved(db, load_profile(name))
    assert baseline_for(load_profile("hybrid")) == load_bundled("hybrid")


def test_harmless_user_override_needs_no_approval(db, write_user, bundled_doc) -> None:
    doc = bundled_doc()
    doc["prompts"]["L0"]["system"] = "Be brief."
    write_user("tall-local", doc)
    check_approved(db, load_profile("tall-local"))


def test_widened_allowlist_is_refused_until_approved(db, write_user) -> None:
    write_user(
        "tall-local",
        {"schema_version": 1, "extends": "tall-local", "tools": {"allow": {"L2": ["shell.*"]}}},
    )
    profile = load_profile("tall-local")
    with pytest.raises(ApprovalRequiredError) as err:
        check_approved(db, profile)
    assert "tools.allow.L2" in err.value.message and "shell.*" in err.value.message
    assert err.value.where == "tools.allow.L2" and "macaron hcp approve" in (err.value.hint or "")
    assert [c.path for c in pending_changes(db, profile)] == ["tools.allow.L2"]

    record = approve(db, profile, "alice", "needed for the build helper")
    check_approved(db, profile)
    assert pending_changes(db, profile) == []
    assert approvals(db, "tall-local") == [record]
    sql = "SELECT profile_id, content_hash, approved_by, note FROM hcp_approvals"
    row = db.execute(sql).fetchall()
    assert row == [("tall-local", profile.content_hash, "alice", "needed for the build helper")]


def test_approval_is_for_that_exact_hash(db, write_user) -> None:
    doc = {
        "schema_version": 1,
        "extends": "tall-local",
        "profile": {"id": "mine", "version": "1"},
        "repl": {"network": True},
    }
    write_user("mine", doc)
    first = load_profile("mine")
    approve(db, first, "alice")
    check_approved(db, first)
    doc["repl"]["subprocess"] = True
    write_user("mine", doc)
    second = load_profile("mine")
    with pytest.raises(ApprovalRequiredError) as err:
        check_approved(db, second)
    assert "repl.subprocess" in err.value.message


def test_extending_an_unapproved_user_profile_does_not_launder_it(db, write_user) -> None:
    write_user(
        "hybrid",
        {
            "schema_version": 1,
            "extends": "hybrid",
            "remote": {"endpoint": "https://elsewhere.example.org/v1"},
        },
    )
    write_user(
        "child",
        {"schema_version": 1, "extends": "hybrid", "profile": {"id": "child", "version": "1"}},
    )
    child = load_profile("child")
    assert baseline_for(child) == load_bundled("hybrid")
    with pytest.raises(ApprovalRequiredError) as err:
        check_approved(db, child)
    assert "remote.endpoint" in err.value.message


def test_profile_without_baseline_always_needs_approval(db, write_file) -> None:
    text = dump_toml(load_profile("tall-local")).replace('id = "tall-local"', 'id = "standalone"')
    path = write_file("standalone.toml", text)
    profile = load_profile(path)
    assert baseline_for(profile) is None
    with pytest.raises(ApprovalRequiredError):
        check_approved(db, profile)
    approve(db, profile, "bob")
    check_approved(db, profile)
