"""Which plugins the user turned off: ``<config_dir>/plugins.toml``.

    disabled = ["shell"]

Owns reading and writing that file; a missing file means every plugin is enabled.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomli_w

from macaron_local import paths
from macaron_local.errors import PluginError


def state_file(config_dir: Path | None = None) -> Path:
    return (config_dir or paths.config_dir()) / "plugins.toml"


def disabled(config_dir: Path | None = None) -> frozenset[str]:
    path = state_file(config_dir)
    if not path.exists():
        return frozenset()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PluginError(f"{path}: {exc}") from exc
    names = data.get("disabled", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PluginError(f"{path}: 'disabled' must be a list of plugin names")
    return frozenset(names)


def set_enabled(name: str, enabled: bool, config_dir: Path | None = None) -> None:
    names = set(disabled(config_dir))
    (names.discard if enabled else names.add)(name)
    path = state_file(config_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps({"disabled": sorted(names)}), encoding="utf-8")
