"""The plugin hookspecs (pluggy, callback style) and the markers plugins import.

Owns the contract between macaron-local and a plugin: two hooks, each called once per plugin
with a ``register`` callback. It must not discover, import or call plugins (``manager.py``).

    from macaron_local.plugins import hookimpl

    @hookimpl
    def register_tools(register):
        register(my_function, name="mod.func", description="...", side_effect=True)
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "macaron_local"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_tools(register: Any) -> None:
    """Register agent tools: ``register(func, name="module.function", description="",
    side_effect=False, always_confirm=False, discrete=False)``; describe a module for the router
    with ``register.module("notes", "save and search the user's notes")``."""


@hookspec
def register_components(register: Any) -> None:
    """Register GenUI components: ``register(type_name, spec)`` (``spec`` is a dict of props)."""
