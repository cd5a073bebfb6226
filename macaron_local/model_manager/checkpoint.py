"""A base's full-precision training checkpoint from a Hugging Face-compatible hub.

Owns :func:`fetch_checkpoint`: for a manifest with a ``[training]`` table (hub ``repo`` and
``revision``), the ``config.json`` and the ``*.safetensors`` weights (one file, or the shards a
``model.safetensors.index.json`` names) in ``<data>/models/<id>/training/<revision>``, ready for
``transformers.from_pretrained``. The weights go through the model manager's resumable, verified
download (each file's sha256 is the hub's LFS ETag); the small JSON files through
``huggingface_hub.hf_hub_download``. Files already there are not fetched again. Must not: load
weights or import torch.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from macaron_local.errors import ModelFormatError, ModelNotFoundError
from macaron_local.manifests import ModelManifest
from macaron_local.model_manager.download import endpoint_or_env, fetch, remote_file
from macaron_local.model_manager.store import model_dir

SHA256 = re.compile(r"[0-9a-f]{64}")
INDEX = "model.safetensors.index.json"


def checkpoint_dir(manifest: ModelManifest) -> Path:
    assert manifest.training is not None
    return model_dir(manifest) / "training" / manifest.training.revision.replace("/", "_")


def fetch_checkpoint(
    manifest: ModelManifest,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    progress: bool = True,
) -> Path:
    """The folder of ``manifest``'s training checkpoint, downloaded where missing."""
    if manifest.training is None:
        raise ModelFormatError(f"{manifest.id} names no training checkpoint ([training] repo)")
    repo, rev = manifest.training.repo, manifest.training.revision
    folder = checkpoint_dir(manifest)
    folder.mkdir(parents=True, exist_ok=True)
    _small(repo, "config.json", rev, folder, endpoint, token)
    if _exists(repo, INDEX, rev, endpoint, token):
        index = json.loads(_small(repo, INDEX, rev, folder, endpoint, token).read_text())
        weights = sorted(set(index["weight_map"].values()))
    else:
        weights = ["model.safetensors"]
    for name in weights:
        _weights(repo, name, rev, folder, endpoint, token, progress, manifest.id)
    return folder


def _small(
    repo: str, name: str, rev: str, folder: Path, endpoint: str | None, token: str | None
) -> Path:
    dest = folder / name
    if not dest.is_file():
        from huggingface_hub import hf_hub_download

        got = hf_hub_download(
            repo, name, revision=rev, endpoint=endpoint_or_env(endpoint), token=token,
            cache_dir=folder / ".hub-cache",
        )  # fmt: skip
        shutil.copyfile(got, dest)
    return dest


def _exists(repo: str, name: str, rev: str, endpoint: str | None, token: str | None) -> bool:
    try:
        remote_file(repo, name, revision=rev, endpoint=endpoint, token=token)
    except ModelNotFoundError:
        return False
    return True


def _weights(
    repo: str,
    name: str,
    rev: str,
    folder: Path,
    endpoint: str | None,
    token: str | None,
    progress: bool,
    model_id: str,
) -> Path:
    dest = folder / name
    if dest.is_file():
        return dest
    remote = remote_file(repo, name, revision=rev, endpoint=endpoint, token=token)
    digest = remote.etag.strip('"').removeprefix("W/").strip('"')
    if not SHA256.fullmatch(digest) or remote.size is None:
        raise ModelFormatError(
            f"{repo}/{name}: the hub gives no sha256 and size for it, so it cannot be verified",
            hint="a training checkpoint's weights must be LFS files on the hub",
        )
    return fetch(
        remote, dest, sha256=digest, size=remote.size, token=token, progress=progress,
        label=f"{model_id} training {name}",
    )  # fmt: skip
