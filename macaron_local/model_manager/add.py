"""``macaron models add PATH``: register a GGUF model file the user already has.

Owns turning a local file into a user model manifest (``<data>/models/<id>.toml``, source kind
``path``): its sha256, size, architecture, context length and chat template are read from the
file itself; nothing is copied or downloaded. Anything but a readable GGUF *model* (an adapter,
a truncated file, garbage) is refused with the reason, and an id already in use is refused
rather than shadowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import tomli_w

from macaron_local import paths
from macaron_local.engine.gguf_model import inspect_model
from macaron_local.errors import ContractError, ModelFormatError
from macaron_local.manifests import ModelManifest, load_manifest, manifests, remember_verified
from macaron_local.manifests import sha256_file as _sha256

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def model_id_for(path: Path) -> str:
    """A manifest id from a file name: ``Qwen2.5-Coder-0.5B-Q4_K_M.gguf`` ->
    ``qwen2.5-coder-0.5b-q4_k_m``."""
    return re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-.") or "model"


def add_model(
    path: Path, model_id: str | None = None, train_from: str | None = None
) -> ModelManifest:
    """Register ``path`` as a base model; returns the written manifest. ``train_from``
    (``REPO`` or ``REPO@REVISION`` on the hub) is the base's own checkpoint, which training
    then reads instead of dequantizing the GGUF."""
    path = Path(path).expanduser().resolve()
    info = inspect_model(path)  # named errors: missing, not GGUF, truncated, not a model
    mid = model_id or model_id_for(path)
    if not _ID.match(mid):
        raise ContractError(
            f"{mid!r} is not a usable model id", hint="lowercase letters, digits, '.', '_', '-'"
        )
    if mid in manifests():
        raise ContractError(
            f"a model with id {mid!r} is already registered",
            hint="choose another with --id (`macaron models list` shows the ids in use)",
        )
    if not info.context_length:
        raise ModelFormatError(f"{path.name} does not say its context length", path=path)
    sha = _sha256(path)
    doc = {
        "schema_version": 1,
        "id": mid,
        "name": path.name,
        "architecture": info.arch,
        "license": "unknown (added by the user: see the model's own card)",
        "context_length": info.context_length,
        "sha256": sha,
        "size": path.stat().st_size,
        "source": {"kind": "path", "path": str(path.parent), "file": path.name},
    }
    if train_from:
        repo, _, rev = train_from.partition("@")
        doc["training"] = {"repo": repo, "revision": rev or "main"}
    out = paths.ensure(paths.data_dir() / "models") / f"{mid}.toml"
    note = "" if info.chat_template else "# no chat template in the file: turns use llama.cpp's\n"
    out.write_text(
        f"# added by `macaron models add {path}`\n{note}{tomli_w.dumps(doc)}", encoding="utf-8"
    )
    remember_verified(path, sha)  # just hashed: the first start need not hash it again
    return load_manifest(out)
