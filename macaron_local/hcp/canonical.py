"""The canonical form of a profile: its JSON, its content hash, its TOML dump, drift warnings.

The hash is what every turn and every training run records. It is computed from the validated
model (defaults filled in, allowlists sorted), never from the file's text, so key order,
whitespace, comments and ``extends`` layering do not change it, and load -> dump -> load keeps
it. Must not read files or the store.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import tomli_w
from pydantic import JsonValue

if TYPE_CHECKING:
    from macaron_local.hcp.schema import Profile


def canonical_data(profile: Profile) -> dict[str, JsonValue]:
    """The profile as plain JSON data (absent optional values omitted)."""
    return profile.model_dump(mode="json", exclude_none=True)


def canonical_json(profile: Profile) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 kept as is."""
    return json.dumps(
        canonical_data(profile), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def content_hash(profile: Profile) -> str:
    """sha256 (hex) of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(profile).encode("utf-8")).hexdigest()


# What the model never sees: where it runs, when the app waits, what it logs and gates. A change
# there is not drift (the contract hash of 0.1 counted them; the bundled adapters' records were
# moved to this definition when summary_wait_s and max_regression were added).
NOT_CONTRACT = ("experience", "resources", "remote")
NOT_CONTRACT_MEMORY = ("summary_wait_s", "close_wait_s")


def contract_hash(profile: Profile, label: str | None = None) -> str:
    """sha256 of the contract an adapter is trained against: the profile without its adapter
    revision pointers and without the runtime settings in :data:`NOT_CONTRACT`. Which revision
    serves a label is not part of what the adapter learned, so promoting a revision (or bundling
    one) does not count as drift; any prompt, grammar, format or sampling change does.

    With ``label``: only what that label's adapter learns from. Its own prompt, sampling, tool
    allowlist and role, plus everything shared (summary, memory, formats); the router's table
    only for the router label or a prompt that shows ``{labels}``. A new router prompt is no
    drift for the coding adapter, which never saw it."""
    data = canonical_data(profile)
    adapters = data.get("adapters")
    for ref in adapters.values() if isinstance(adapters, dict) else ():
        _drop(ref, "revision")
    _drop(data, *NOT_CONTRACT)
    _drop(data.get("memory"), *NOT_CONTRACT_MEMORY)
    if label is not None:
        _only_label(data, profile, label)
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _only_label(data: dict[str, JsonValue], profile: Profile, label: str) -> None:
    """Keep, of the per-label tables, only ``label``'s entry (see :func:`contract_hash`)."""
    for path in (("adapters",), ("prompts",), ("sampling", "overrides"), ("tools", "allow")):
        table: JsonValue = data
        for key in path:
            table = table.get(key) if isinstance(table, dict) else None
        if isinstance(table, dict):
            for other in [k for k in table if k != label]:
                del table[other]
    prompt = profile.prompts.get(label)
    if label != profile.router_label and not (prompt and "{labels}" in prompt.system):
        data.pop("router", None)
    data["contract_label"] = label


def _drop(table: JsonValue, *keys: str) -> None:
    """Remove ``keys`` from ``table`` when it is a table."""
    if isinstance(table, dict):
        for key in keys:
            table.pop(key, None)


def dump_toml(profile: Profile) -> str:
    """The resolved profile as a standalone TOML document (loading it gives the same hash)."""
    return tomli_w.dumps(canonical_data(profile), multiline_strings=True)


def drift_warning(
    trained_under: str | None, profile: Profile, *, label: str | None = None
) -> str | None:
    """A warning when an adapter revision was trained under another contract than the served one.

    ``trained_under`` is the contract hash recorded with the adapter revision (None: unknown,
    for instance base weights only). Returns None when there is nothing to say.
    """
    served = contract_hash(profile, label)
    whole = contract_hash(profile)  # what revisions recorded before contracts were per label
    if not trained_under or trained_under in (served, whole, profile.content_hash):
        return None
    who = f"the {label} adapter revision" if label else "an adapter revision"
    return (
        f"contract drift: {who} was trained under contract hash {trained_under}, "
        f"but it is being served under profile {profile.id!r} with contract hash {served}"
    )
