"""``macaron hcp new NAME --base ID``: a user profile for a user's own base model.

Owns writing ``<config>/profiles/NAME.toml``: it extends a bundled profile (``tall-local`` or
``tall-gpu``), names the base, and serves every label of the parent with the base weights
(revision ``none``) until ``macaron refine bootstrap --profile NAME`` trains adapters for that
base and promotes them for this profile. The file is validated before the command returns; an
invalid one is not left behind.
"""

from __future__ import annotations

from pathlib import Path

import tomli_w

from macaron_local import paths
from macaron_local.errors import ContractError, MacaronError
from macaron_local.hcp.loader import list_profiles, load_profile
from macaron_local.hcp.schema import Profile


def new_profile(name: str, base_id: str, *, parent: str = "tall-local") -> tuple[Path, Profile]:
    """Write and validate the profile; returns its path and the loaded profile."""
    from macaron_local.manifests import get_manifest

    if name in {entry.name for entry in list_profiles()}:
        raise ContractError(f"a profile named {name!r} exists already", hint="pick another NAME")
    manifest = get_manifest(base_id)  # a named error for an unknown id
    labels = load_profile(parent).labels
    doc = {
        "schema_version": 1,
        "extends": parent,
        "profile": {"id": name, "description": f"{manifest.name} with its own specialists."},
        "base": {"model": base_id},
        "adapters": {label: {"revision": "none"} for label in labels},
    }
    folder = paths.ensure(paths.config_dir() / "profiles")
    path = folder / f"{name}.toml"
    path.write_text(
        f"# written by `macaron hcp new {name} --base {base_id}`; train its specialists with\n"
        f"# `macaron refine bootstrap --profile {name}`\n{tomli_w.dumps(doc)}",
        encoding="utf-8",
    )
    try:
        return path, load_profile(name)
    except MacaronError:
        path.unlink(missing_ok=True)
        raise
