"""Which adapter file serves each label of a profile, and loading them into the engine.

A label's revision is the one the policy record promoted (``macaron refine promote``), else the
profile's: "none" (base weights), "bundled" (the base manifest's adapter for that label) or a
lineage revision sha256 (``<data>/adapters/<sha>.gguf``). A bad adapter file is
reported and its label served by the base weights; it never takes the other labels down.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from macaron_local import paths
from macaron_local.engine import Engine
from macaron_local.errors import AdapterError
from macaron_local.hcp import Profile, drift_warning
from macaron_local.models import ModelManifest

BASE_REVISION = "base"


@dataclass(frozen=True)
class Binding:
    label: str
    adapter: str | None  # engine adapter name; None = base weights
    revision: str  # what the turn records
    path: Path | None = None


def resolve(profile: Profile, manifest: ModelManifest) -> dict[str, Binding]:
    """The binding per label: the policy record's promoted revision wins over the profile's."""
    from macaron_local.refine.lineage import get_policy  # no torch: lineage is plain files

    promoted = get_policy(profile.id).serving
    out = {}
    for label in profile.labels:
        rev = promoted.get(label) or profile.adapters[label].revision
        if rev == "none":
            out[label] = Binding(label, None, BASE_REVISION)
        elif rev == "bundled":
            entry = manifest.adapter(label)
            out[label] = (
                Binding(label, label, entry.revision, manifest.adapter_path(entry))
                if entry
                else Binding(label, None, BASE_REVISION)
            )
        else:
            out[label] = Binding(label, label, rev, paths.data_dir() / "adapters" / f"{rev}.gguf")
    return out


def load(
    engine: Engine, profile: Profile, bindings: dict[str, Binding], base_sha256: str
) -> tuple[dict[str, Binding], list[str]]:
    """Load every bound adapter; returns the bindings actually served and warnings for the user."""
    served, warnings = {}, []
    for label, b in bindings.items():
        if b.adapter is None or b.path is None:
            served[label] = b
            continue
        try:
            engine.load_adapter(b.adapter, b.path, base_sha256=base_sha256)
            served[label] = b
            if (w := _drift(profile, b)) is not None:
                warnings.append(w)
        except AdapterError as exc:
            warnings.append(f"{label}: {exc} — serving {label} with the base weights")
            served[label] = Binding(label, None, BASE_REVISION)
    return served, warnings


def _drift(profile: Profile, b: Binding) -> str | None:
    meta = b.path.with_suffix(".json") if b.path else None
    try:
        trained_under = json.loads(meta.read_text())["profile_hash"] if meta else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return drift_warning(trained_under, profile, label=b.label) if trained_under else None
