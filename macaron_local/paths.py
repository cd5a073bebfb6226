"""Where macaron-local keeps things. Functions only: nothing is created at import time.

Every location can be moved with ``MACARON_HOME`` (one folder holding config/, data/, cache/),
which the tests point at a temporary folder.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import platformdirs

APP = "macaron-local"


def _home() -> Path | None:
    home = os.environ.get("MACARON_HOME")
    return Path(home) if home else None


def config_dir() -> Path:
    """User configuration: settings.toml, user profiles (profiles/), user plugins (plugins/)."""
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    """User data: the SQLite store, trained adapter revisions, experience."""
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
    """Caches that can be deleted at any time (verified checksums, downloads in progress, saved
    KV prefixes in kv/)."""
    home = _home()
    return home / "cache" if home else Path(platformdirs.user_cache_dir(APP))


def db_path() -> Path:
    return data_dir() / "macaron.db"


def bundled(kind: str) -> Path:
    """The folder of bundled data shipped in the wheel: ``models``, ``hcp_profiles`` or ``plugins``.

    In the repository these are the top-level folders; in a wheel they are mapped under
    ``macaron_local.bundled``.
    """
    if kind not in {"models", "hcp_profiles", "plugins"}:
        raise ValueError(f"unknown bundled folder {kind!r}")
    return Path(str(resources.files(f"macaron_local.bundled.{kind}")))


def ensure(path: Path) -> Path:
    """Create ``path`` (a folder) if needed and return it."""
    path.mkdir(parents=True, exist_ok=True)
    return path
