"""Explicit schema upgrades for HCP documents: ``upgrade_vN_to_vN+1(dict) -> dict``.

Owns the registry of steps and the loop that brings a raw TOML document (a dict, possibly a
partial one that ``extends`` another) up to :data:`~macaron_local.hcp.schema.SCHEMA_VERSION`
before validation. Steps are pure: they copy, never mutate their input, and move only keys
whose shape they recognise; anything else is left in place for validation to name. Must not
validate (that is pydantic's job) nor read files.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from macaron_local.errors import ContractError
from macaron_local.hcp.schema import SCHEMA_VERSION

Doc = dict[str, Any]

# v0 adapters were bare revision strings; these are the roles the v0 runtime hard-coded.
_V0_ROLES = {"L0": "chat+router", "L1": "agent", "L2": "coding", "L3": "genui"}


def upgrade_v0_to_v1(doc: Doc) -> Doc:
    """v0 -> v1.

    v0 kept the router flat at the top level (``route_prompt``, ``route_grammar``,
    ``route_labels``, ``route_budget``), named the base with ``base_model = "<id>"`` and mapped
    each adapter label straight to a revision string (``[adapters] L0 = "none"``). v1 nests
    these under ``[router]`` (``system_prompt``, ``grammar``, ``labels``, ``decode_budget``),
    ``[base] model`` and ``[adapters.<label>] revision/role``.
    """
    out = copy.deepcopy(doc)
    router = out.get("router", {})
    if isinstance(router, dict):
        for old, new in (
            ("route_prompt", "system_prompt"),
            ("route_grammar", "grammar"),
            ("route_labels", "labels"),
            ("route_budget", "decode_budget"),
        ):
            if old in out and new not in router:
                router[new] = out.pop(old)
        if router:
            out["router"] = router
    base = out.get("base", {})
    if "base_model" in out and isinstance(base, dict) and "model" not in base:
        out["base"] = {**base, "model": out.pop("base_model")}
    adapters = out.get("adapters")
    if isinstance(adapters, dict):
        out["adapters"] = {
            label: {"revision": rev, "role": _V0_ROLES.get(label, "specialist")}
            if isinstance(rev, str)
            else rev
            for label, rev in adapters.items()
        }
    out["schema_version"] = 1
    return out


UPGRADES: dict[int, Callable[[Doc], Doc]] = {0: upgrade_v0_to_v1}


def upgrade(doc: Doc) -> Doc:
    """Bring ``doc`` to the current schema version, one registered step at a time."""
    version = doc.get("schema_version")
    if version is None:
        raise ContractError(
            f"schema_version is missing (current is {SCHEMA_VERSION})", where="schema_version"
        )
    if isinstance(version, bool) or not isinstance(version, int):
        raise ContractError(
            f"schema_version must be an integer, got {type(version).__name__}",
            where="schema_version",
        )
    if version > SCHEMA_VERSION:
        raise ContractError(
            f"schema_version {version} is newer than this macaron-local understands "
            f"({SCHEMA_VERSION})",
            where="schema_version",
            hint="upgrade macaron-local",
        )
    while version < SCHEMA_VERSION:
        step = UPGRADES.get(version)
        if step is None:
            raise ContractError(f"no upgrade from schema_version {version}", where="schema_version")
        doc = step(doc)
        version = doc["schema_version"]
    return doc
