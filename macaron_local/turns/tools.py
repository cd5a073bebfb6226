"""The tools the router and L1 are told about: one line per tool module, from the plugins.

Serving and training call the same function, so the router prompt the default L0 adapter was
trained on is the one it is served with (for the bundled plugins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from macaron_local.agent.tools import ToolRegistry
    from macaron_local.plugins.manager import PluginManager


def load_plugins() -> tuple[PluginManager, ToolRegistry, list[str]]:
    """Load the enabled plugins; returns the manager (hot reload keeps it), their tool registry
    and a warning per failed plugin and per tool-name conflict (found building the registry)."""
    from macaron_local.plugins.manager import PluginManager

    manager = PluginManager()
    manager.load()
    registry = manager.registry()
    problems = [
        f"plugin {e.plugin}: {e.message}"
        for e in manager.events
        if e.kind not in {"loaded", "disabled"}
    ]
    return manager, registry, problems


def load_registry() -> tuple[ToolRegistry, list[str]]:
    """Load the enabled plugins; returns their tool registry and the warnings."""
    _, registry, problems = load_plugins()
    return registry, problems


def tool_descriptions(registry: ToolRegistry | None = None) -> dict[str, str]:
    """``module -> one line`` for every registered tool module, sorted by name."""
    if registry is None:
        registry, _ = load_registry()
    return {
        k: v for k, v in sorted(registry.descriptions().items()) if not k.startswith("toolsmith")
    }
