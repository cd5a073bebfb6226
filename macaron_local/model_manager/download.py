"""Resumable, verified downloads of model files from a Hugging Face-compatible hub.

The hub side goes through huggingface-hub (``hf_hub_url``, ``get_hf_file_metadata``,
``build_hf_headers``: the URL layout, redirects, the commit/ETag/size headers and the user's
token); the endpoint comes from the caller, else ``HF_ENDPOINT``. The bytes are fetched here with
``Range`` requests into a ``.part`` file kept next to the destination, so an interrupted pull
(a dropped connection, Ctrl-C, a crash) resumes where it stopped, within the call and on the next
one; huggingface-hub 1.x/2.x deletes its partial files on failure, which would restart a
multi-GB download from zero. The free disk space is checked before the first byte, and the
finished file must match the manifest's sha256 or it is deleted. Must not: touch the engine.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from macaron_local.errors import MacaronError, ModelError, ModelFormatError, ModelNotFoundError
from macaron_local.manifests import verify

RETRIES = 5
SPACE_MARGIN = 64 << 20  # keep a little room beyond the file itself


class DownloadError(ModelError):
    """A download stopped before the end (the partial file is kept for the next try)."""


@dataclass(frozen=True)
class RemoteFile:
    url: str  # where the bytes are (after the hub's redirects)
    etag: str
    commit: str | None
    size: int | None


def endpoint_or_env(endpoint: str | None) -> str | None:
    return endpoint or os.environ.get("HF_ENDPOINT") or None


def remote_file(
    repo: str, filename: str, *, revision: str | None, endpoint: str | None, token: str | None
) -> RemoteFile:
    """The hub's facts about one file (a HEAD request); clear errors for the usual failures."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    endpoint = endpoint_or_env(endpoint)
    url = hf_hub_url(repo, filename, revision=revision or "main", endpoint=endpoint)
    where = f"{repo}@{revision or 'main'}/{filename}"
    try:
        meta = get_hf_file_metadata(url, token=token, endpoint=endpoint, retry_on_errors=True)
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
        raise ModelNotFoundError(
            f"the hub has no {where} ({type(exc).__name__})",
            hint="check the manifest's source.repo / revision / file, or the endpoint",
        ) from exc
    except GatedRepoError as exc:
        raise ModelNotFoundError(
            f"{repo} is gated: accept its terms on the hub and log in",
            hint="run `hf auth login` (or set HF_TOKEN), then pull again",
        ) from exc
    except (HfHubHTTPError, OSError, Exception) as exc:  # network errors vary
        raise MacaronError(
            f"cannot reach the hub for {where}: {type(exc).__name__}: {exc}",
            hint=f"check the network and the endpoint ({endpoint or 'the default hub'}); "
            "HF_ENDPOINT selects another one",
        ) from exc
    if not meta.etag:
        raise MacaronError(f"the hub sent no ETag for {where}; cannot resume safely")
    return RemoteFile(meta.location, meta.etag, meta.commit_hash, meta.size)


def check_space(folder: Path, need: int) -> None:
    """Raise before downloading when ``folder``'s disk cannot hold ``need`` more bytes."""
    probe = folder
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if need + SPACE_MARGIN > free:
        raise ModelError(
            f"not enough disk space in {folder}: the download needs {_gb(need)} more, "
            f"{_gb(free)} is free",
            path=folder,
            hint="free some space, or point MACARON_HOME at a larger disk",
        )


def fetch(
    remote: RemoteFile,
    dest: Path,
    *,
    sha256: str,
    size: int,
    token: str | None = None,
    progress: bool = True,
    label: str | None = None,
) -> Path:
    """Download ``remote`` to ``dest`` (resuming a ``.part``), then verify it against sha256."""
    if remote.size is not None and remote.size != size:
        raise ModelFormatError(
            f"the hub's {dest.name} has {remote.size} bytes, the manifest says {size}",
            path=dest,
            hint="the manifest and the hub disagree: update the manifest or pin source.revision",
        )
    part = dest.with_name(dest.name + ".part")
    have = _resume_point(part, remote.etag)
    check_space(dest.parent, size - have)
    _download(remote, part, have, size, token, progress, label or dest.name)
    part.replace(dest)
    _meta_path(part).unlink(missing_ok=True)
    try:
        verify(dest, sha256, size)
    except ModelFormatError as exc:
        dest.unlink(missing_ok=True)
        raise ModelFormatError(
            f"{dest.name} was downloaded but its sha256 does not match the manifest; the file "
            "was deleted",
            path=dest,
            hint="pull again; if it fails again the hub's file or the manifest is wrong",
        ) from exc
    return dest


def _resume_point(part: Path, etag: str) -> int:
    """Bytes already in ``part`` for this very file (another ETag: start over)."""
    meta = _meta_path(part)
    try:
        same = json.loads(meta.read_text()).get("etag") == etag
    except (OSError, ValueError):
        same = False
    if not same or not part.exists():
        part.unlink(missing_ok=True)
        part.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"etag": etag}))
        return 0
    return part.stat().st_size


def _meta_path(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def _download(
    remote: RemoteFile,
    part: Path,
    have: int,
    size: int,
    token: str | None,
    progress: bool,
    label: str,
) -> None:
    from huggingface_hub.utils import build_hf_headers
    from tqdm import tqdm

    bar = tqdm(
        total=size,
        initial=have,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=label,
        disable=not progress,
        leave=True,
    )
    failures = 0
    with bar, httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30, read=60)) as http:
        while have < size:
            headers = build_hf_headers(token=token)
            headers["Accept-Encoding"] = "identity"
            if have:
                headers["Range"] = f"bytes={have}-"
            before, error = have, None
            try:
                have = _get(http, remote.url, headers, part, have, bar)
            except httpx.TransportError as exc:  # dropped, reset, timed out: resume
                error = exc
                have = part.stat().st_size if part.exists() else 0
            if have > before:
                failures = 0  # progress: the connection is worth retrying
            elif have < size:
                failures += 1
                if failures > RETRIES:
                    why = f"{type(error).__name__}: {error}" if error else "no data received"
                    raise DownloadError(
                        f"the download of {label} stopped at {_gb(have)} of {_gb(size)} ({why})",
                        path=part,
                        hint="run the same pull again: it resumes from where it stopped",
                    ) from error
                time.sleep(min(2 ** (failures - 1) * 0.25, 4))
    if have != size:
        part.unlink(missing_ok=True)
        raise ModelFormatError(f"{label}: got {have} bytes, expected {size}; the part was deleted")


def _get(http: httpx.Client, url: str, headers: dict[str, str], part: Path, have: int, bar) -> int:
    with http.stream("GET", url, headers=headers) as r:
        if r.status_code == 416:  # nothing left to send: the part is complete
            return have
        if r.status_code >= 400:
            raise DownloadError(f"the hub answered {r.status_code} for {url}", path=part)
        if have and r.status_code == 200:  # the server ignored Range: start over
            part.write_bytes(b"")
            bar.reset()
            have = 0
        with part.open("ab") as fh:
            for block in r.iter_bytes():  # as received: a cut keeps every byte
                fh.write(block)
                have += len(block)
                bar.update(len(block))
    return have


def _gb(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"
