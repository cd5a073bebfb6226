"""The base's verified cache is keyed by what a write cannot hide: 64 KiB of 0xFF written inside
a verified file, its mtime put back, is caught at the next verify (the cache, keyed by path, size
and mtime, said it was still fine)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from macaron_local.errors import ModelFormatError
from macaron_local.manifests import verify
from tests.model_manager.conftest import blob


def test_a_write_in_place_with_the_mtime_put_back_is_hashed_again(tmp_path: Path) -> None:
    data = blob(1 << 20)
    path = tmp_path / "base.gguf"
    path.write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    verify(path, sha, len(data))  # hashed, then cached
    verify(path, sha, len(data))  # a cache hit
    before = path.stat()
    with path.open("r+b") as fh:
        fh.seek(len(data) // 2)
        fh.write(b"\xff" * 65536)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    with pytest.raises(ModelFormatError, match="does not match"):
        verify(path, sha, len(data))
