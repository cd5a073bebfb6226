"""Which base a training run uses, and the rule that an adapter belongs to exactly one base.

Owns :func:`training_base` (the profile's ``[base]`` model from its manifest: file, sha256,
architecture; a file the user names with ``--base`` only overrides it) and
:func:`check_adapter_base`, the refusal that promoting, bundling and ``doctor`` share: an
adapter trained for another base (its recorded ``base_sha256``, or the architecture in its
GGUF header) is refused with a message that names both bases. Reads GGUF headers only, never
tensors, and imports neither torch nor llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from macaron_local.engine.gguf_model import inspect_model
from macaron_local.errors import AdapterFormatError, AdapterMismatchError, RefineError
from macaron_local.manifests import (
    ModelManifest,
    get_manifest,
    locate,
    sha256_file,
    verified_path,
)


@dataclass(frozen=True)
class TrainingBase:
    """The base model a run trains on."""

    path: Path
    sha256: str
    architecture: str
    name: str  # the manifest id, or the file name of a ``--base`` override
    manifest: ModelManifest | None = None  # None for a ``--base`` file

    def describe(self) -> str:
        return f"{self.name} ({self.architecture}, sha256 {self.sha256[:12]}…)"

    @property
    def has_checkpoint(self) -> bool:
        """Whether training reads the base's own checkpoint (the manifest's ``[training]``)."""
        return self.manifest is not None and self.manifest.training is not None

    def training_weights(self, *, progress: bool = True) -> Path | None:
        """The folder of the base's training checkpoint, fetched where missing; None when
        training reads the GGUF's own weights."""
        if self.manifest is None or self.manifest.training is None:
            return None
        from macaron_local.model_manager.checkpoint import fetch_checkpoint

        return fetch_checkpoint(self.manifest, progress=progress)

    def manifest_path(self) -> Path:
        """The manifest file that lists this base's adapters."""
        if self.manifest is None or self.manifest.manifest_path is None:
            raise RefineError(f"{self.name} has no model manifest to write adapters into")
        return self.manifest.manifest_path


def training_base(profile: Any, override: Path | None = None) -> TrainingBase:
    """The profile's base (verified against its manifest), or ``override`` when given."""
    if override is not None:
        path = Path(override)
        if not path.is_file():
            raise RefineError(f"--base {path}: no such file")
        arch = inspect_model(path).arch  # a named error for anything but a GGUF model
        return TrainingBase(path, sha256_file(path), arch, path.name)
    manifest = get_manifest(profile.base.model)
    return TrainingBase(
        verified_path(manifest.id), manifest.sha256, manifest.architecture, manifest.id, manifest
    )


def profile_base(profile_id: str) -> TrainingBase:
    """The facts of a profile's base from its manifest alone (the file is neither read nor
    verified): enough to check an adapter against it, even where the base is not downloaded."""
    from macaron_local.hcp import load_profile

    manifest = get_manifest(load_profile(profile_id).base.model)
    return TrainingBase(
        locate(manifest), manifest.sha256, manifest.architecture, manifest.id, manifest
    )


def gguf_header(path: Path) -> dict[str, object]:
    """The scalar and string metadata of a GGUF file (no tensor is read)."""
    import gguf

    from macaron_local.engine.gguf_model import field_value

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # gguf raises ValueError/struct.error/IndexError on garbage
        raise AdapterFormatError(f"{path.name} is not a readable GGUF file ({exc})") from exc
    return {name: field_value(f) for name, f in reader.fields.items()}


def check_adapter_base(
    what: str,
    base: TrainingBase,
    *,
    base_sha256: str | None = None,
    path: Path | None = None,
) -> None:
    """Refuse ``what`` (an adapter revision or file) unless it was made for ``base``.

    ``base_sha256`` is what its record says; ``path`` adds its GGUF header (architecture and
    ``macaron.base_sha256``). Unknown facts are not held against it; known ones must match.
    """
    arch = None
    if path is not None and path.is_file():
        header = gguf_header(path)
        arch = header.get("general.architecture")
        base_sha256 = base_sha256 or _str(header.get("macaron.base_sha256"))
    if arch and arch != base.architecture:
        raise AdapterMismatchError(
            f"{what} is for architecture {arch!r}, but this profile's base is {base.describe()}",
            path=path,
            hint="train one for this base: macaron refine bootstrap --profile <this profile>",
        )
    if base_sha256 and base_sha256 != base.sha256:
        raise AdapterMismatchError(
            f"{what} was trained on base sha256 {base_sha256[:12]}…, but this profile's base is "
            f"{base.describe()}",
            path=path,
            hint="train one for this base: macaron refine bootstrap --profile <this profile>",
        )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
