"""The tools the router and L1 are told about, from the plugins: one line per tool module for
the router, and each module's functions with their parameters for L1.

Serving and training call the same function, so the prompts the default adapters were trained
on are the ones they are served with (for the bundled plugins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from macaron_local.agent.tools import ToolRegistry
    from macaron_local.hcp.schema import ToolCatalog
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


def tool_descriptions(registry: ToolRegistry | None = None) -> ToolCatalog:
    """Every registered tool but the toolsmith's: ``module -> one line`` (the router's list),
    with each module's calls for the agent's prompt (:meth:`ToolCatalog.agent_lines`)."""
    if registry is None:
        registry, _ = load_registry()
    return registry.catalog([n for n in registry.names() if not n.startswith("toolsmith.")])
