"""Saved KV prefixes: a slot's state written to disk once, restored in milliseconds at later starts.

Owns the file format, its checks and the cache folder's size. The router's fixed prompt is the
same at every start; reading it costs ~2 s on 2 cores, restoring it a few ms. A file is
``MKV1``, a little-endian u32 header length, a JSON header (token count, state size, SHA-256 of
both), the tokens as int32 and the state bytes of ``llama_state_seq_get_data``. Its name is a key
over everything the KV depends on (llama.cpp version, base and adapter files, KV type, the
tokens), so a changed model, adapter or prompt simply misses. A file that fails any check is
ignored with a warning and replaced by the next save: it is a cache, never a source of truth.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

MAGIC = b"MKV1"
KEEP = 8  # files kept in a cache folder, most recently used first


def key(identity: Iterable[object], tokens: Sequence[int]) -> str:
    """The file name stem for ``tokens`` read under ``identity`` (the model, adapter, settings)."""
    h = hashlib.sha256(json.dumps([str(part) for part in identity]).encode())
    h.update(array("i", tokens).tobytes())
    return h.hexdigest()[:32]


def file_id(path: Path) -> str:
    """A cheap identity for a weights file: where it is, its size and modification time."""
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def write(path: Path, tokens: Sequence[int], state: bytes) -> None:
    """Write atomically (temporary file, fsync, rename), then trim the folder to ``KEEP`` files."""
    toks = array("i", tokens).tobytes()
    digest = hashlib.sha256(toks + state).hexdigest()
    header = json.dumps({"tokens": len(tokens), "state": len(state), "sha256": digest}).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(header)) + header + toks + state)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _trim(path.parent)


def read(path: Path) -> tuple[list[int], bytes] | None:
    """The tokens and state saved in ``path``; None when it is absent or fails a check."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("ignoring the saved prefix %s: %s", path, exc)
        return None
    try:
        tokens, state = _parse(data)
    except ValueError as exc:
        log.warning("ignoring the saved prefix %s: %s", path, exc)
        return None
    with contextlib.suppress(OSError):  # a read-only cache still restores
        os.utime(path)  # most recently used: kept longest by _trim
    return tokens, state


def _parse(data: bytes) -> tuple[list[int], bytes]:
    if data[:4] != MAGIC or len(data) < 8:
        raise ValueError("not a macaron KV prefix file")
    (n,) = struct.unpack("<I", data[4:8])
    try:
        header = json.loads(data[8 : 8 + n])
        n_tokens, n_state, digest = header["tokens"], header["state"], header["sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"bad header ({exc})") from None
    body = data[8 + n :]
    if len(body) != 4 * n_tokens + n_state:
        raise ValueError(f"{len(body)} bytes of body, the header says {4 * n_tokens + n_state}")
    if hashlib.sha256(body).hexdigest() != digest:
        raise ValueError("checksum mismatch")
    tokens = array("i")
    tokens.frombytes(body[: 4 * n_tokens])
    return tokens.tolist(), body[4 * n_tokens :]


def _trim(folder: Path) -> None:
    files = sorted(folder.glob("*.kv"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[KEEP:]:
        old.unlink(missing_ok=True)
