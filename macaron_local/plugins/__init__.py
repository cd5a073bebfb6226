"""Plugins: pluggy hookspecs, discovery, isolation, hot reload and the ``plugins`` CLI group.

Plugins import ``hookimpl`` from here. The manager is imported lazily (it pulls in watchdog).
"""

from __future__ import annotations

import importlib
from typing import Any

from macaron_local.plugins.hookspecs import hookimpl as hookimpl
from macaron_local.plugins.hookspecs import hookspec as hookspec

_LAZY = {
    "PluginManager": "macaron_local.plugins.manager",
    "PluginInfo": "macaron_local.plugins.manager",
    "PluginEvent": "macaron_local.plugins.manager",
    "PluginWatcher": "macaron_local.plugins.reload",
}

__all__ = sorted([*_LAZY, "hookimpl", "hookspec"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'macaron_local.plugins' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
