"""A fake hub on 127.0.0.1 and a user manifest that points at it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from macaron_local import paths
from tests.model_manager.hub import Hub, start_hub

REPO = "test-org/tiny-model"


@pytest.fixture
def hub() -> Iterator[Hub]:
    h, server = start_hub()
    yield h
    server.shutdown()
    server.server_close()


def blob(n: int, seed: int = 0) -> bytes:
    """Deterministic bytes that do not compress."""
    return b"".join(hashlib.sha256(f"{seed}:{i}".encode()).digest() for i in range(n // 32 + 1))[:n]


def write_manifest(
    model_id: str,
    base: bytes,
    *,
    adapters: dict[str, bytes] | None = None,
    sha256: str | None = None,
    size: int | None = None,
) -> Path:
    """A hub manifest in the user's manifest folder (``<data>/models``)."""
    lines = [
        "schema_version = 1",
        f'id = "{model_id}"',
        f'name = "{model_id} (test)"',
        'architecture = "llama"',
        'license = "Apache-2.0"',
        "context_length = 2048",
        f'sha256 = "{sha256 or hashlib.sha256(base).hexdigest()}"',
        f"size = {size if size is not None else len(base)}",
        "",
        "[source]",
        'kind = "hub"',
        f'repo = "{REPO}"',
        'revision = "main"',
        'file = "tiny.gguf"',
    ]
    for label, data in (adapters or {}).items():
        lines += [
            "",
            "[[adapters]]",
            f'label = "{label}"',
            'role = "test"',
            f'file = "adapters/{label}.gguf"',
            f'sha256 = "{hashlib.sha256(data).hexdigest()}"',
            f"size = {len(data)}",
            "rank = 8",
            "alpha = 16.0",
            'targets = ["attn_q"]',
            f'base_sha256 = "{hashlib.sha256(base).hexdigest()}"',
            'revision = "r1"',
        ]
    folder = paths.ensure(paths.data_dir() / "models")
    path = folder / f"{model_id}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
