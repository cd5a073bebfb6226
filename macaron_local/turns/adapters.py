"""Which adapter file serves each label of a profile, and loading them into the engine.

A label's revision is the one the policy record promoted (``macaron refine promote``), else the
profile's: "none" (base weights), "bundled" (the base manifest's adapter for that label) or a
lineage revision sha256 (``<data>/adapters/<sha>.gguf``). Every load checks the file's sha256
against the one its manifest entry or revision id names (the files are small: see
``bench/adapter_verify.py``). A bad or altered adapter file is reported and its label served by
the base weights, recorded as such; it never takes the other labels down.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from macaron_local import paths
from macaron_local.engine import Engine
from macaron_local.errors import AdapterChecksumError, AdapterError
from macaron_local.hcp import Profile, drift_warning
from macaron_local.manifests import ModelManifest, sha256_file

BASE_REVISION = "base"


@dataclass(frozen=True)
class Binding:
    label: str
    adapter: str | None  # engine adapter name; None = base weights
    revision: str  # what the turn records
    path: Path | None = None
    sha256: str | None = None  # what the file must hash to (None: base weights)


def resolve(profile: Profile, manifest: ModelManifest) -> dict[str, Binding]:
    """The binding per label: the policy record's promoted revision wins over the profile's."""
    from macaron_local.lineage import get_policy  # no torch: lineage is plain files

    promoted = get_policy(profile.id).serving
    out = {}
    for label in profile.labels:
        rev = promoted.get(label) or profile.adapters[label].revision
        if rev == "none":
            out[label] = Binding(label, None, BASE_REVISION)
        elif rev == "bundled":
            entry = manifest.adapter(label)
            out[label] = (
                Binding(label, label, entry.revision, manifest.adapter_path(entry), entry.sha256)
                if entry
                else Binding(label, None, BASE_REVISION)
            )
        else:
            path = paths.data_dir() / "adapters" / f"{rev}.gguf"
            out[label] = Binding(label, label, rev, path, rev)  # content-addressed
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
            check_sha256(b)
            engine.load_adapter(b.adapter, b.path, base_sha256=base_sha256)
            served[label] = b
            if (w := _drift(profile, b)) is not None:
                warnings.append(w)
        except AdapterError as exc:
            warnings.append(f"{label}: {exc} — serving {label} with the base weights")
            served[label] = Binding(label, None, BASE_REVISION)
    return served, warnings


def check_sha256(b: Binding) -> None:
    """AdapterChecksumError unless ``b``'s file hashes to the sha256 its revision names."""
    if b.path is None or b.sha256 is None:
        return
    try:
        actual = sha256_file(b.path)
    except OSError as exc:
        raise AdapterError(
            f"cannot read the {b.label} adapter {b.path}: {exc.strerror or exc}",
            name=b.label,
            path=b.path,
        ) from exc
    if actual != b.sha256:
        raise AdapterChecksumError(
            f"the {b.label} adapter {b.path.name} is altered or corrupt: sha256 {actual[:16]}… "
            f"is not {b.sha256[:16]}… (revision {b.revision[:16]}…)",
            name=b.label,
            path=b.path,
            hint="run `macaron models verify`; reinstall the package or re-promote the revision",
        )


def _drift(profile: Profile, b: Binding) -> str | None:
    meta = b.path.with_suffix(".json") if b.path else None
    try:
        trained_under = json.loads(meta.read_text())["profile_hash"] if meta else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return drift_warning(trained_under, profile, label=b.label) if trained_under else None
