"""Harness contracts (HCP): versioned TOML profiles that serving and training both obey.

The public surface of the package; everything else is private. A profile is loaded whole or
not at all (:func:`load_profile` raises :class:`~macaron_local.errors.ContractError`), its
:attr:`Profile.content_hash` is recorded with every turn and training run, and profiles with
security-relevant changes need a human approval (:func:`check_approved`). Importing this package
reads nothing and starts nothing.
"""

from __future__ import annotations

from macaron_local.hcp.approvals import (
    Approval,
    approvals,
    approve,
    baseline_for,
    check_approved,
    is_approved,
    pending_changes,
    required_changes,
)
from macaron_local.hcp.canonical import canonical_json, content_hash, drift_warning, dump_toml
from macaron_local.hcp.checks import require_published_base
from macaron_local.hcp.diff import Change, diff_profiles, security_changes
from macaron_local.hcp.loader import (
    ProfileEntry,
    bundled_dir,
    deep_merge,
    find_profile,
    list_profiles,
    load_bundled,
    load_profile,
    user_dir,
)
from macaron_local.hcp.schema import (
    DEFAULT_GRAMMAR,
    DEFAULT_LABELS,
    SCHEMA_VERSION,
    Profile,
    SamplingParams,
)
from macaron_local.hcp.upgrades import UPGRADES, upgrade, upgrade_v0_to_v1
from macaron_local.hcp.watch import ProfileWatcher

__all__ = [
    "DEFAULT_GRAMMAR",
    "DEFAULT_LABELS",
    "SCHEMA_VERSION",
    "UPGRADES",
    "Approval",
    "Change",
    "Profile",
    "ProfileEntry",
    "ProfileWatcher",
    "SamplingParams",
    "approvals",
    "approve",
    "baseline_for",
    "bundled_dir",
    "canonical_json",
    "check_approved",
    "content_hash",
    "deep_merge",
    "diff_profiles",
    "drift_warning",
    "dump_toml",
    "find_profile",
    "is_approved",
    "list_profiles",
    "load_bundled",
    "load_profile",
    "pending_changes",
    "require_published_base",
    "required_changes",
    "security_changes",
    "upgrade",
    "upgrade_v0_to_v1",
    "user_dir",
]
