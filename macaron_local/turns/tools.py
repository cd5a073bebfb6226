"""The tools the router and L1 are told about: one line per tool module, from the plugins.

Serving and training call the same function, so the router prompt the default L0 adapter was
trained on is the one it is served with (for the bundled plugins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from macaron_local.agent.tools import ToolRegistry


def load_registry() -> tuple[ToolRegistry, list[str]]:
    """Load the enabled plugins; returns their tool registry and a warning per failed plugin."""
    from macaron_local.plugins.manager import PluginManager

    manager = PluginManager()
    events = manager.load()
    problems = [
        f"plugin {e.plugin}: {e.message}" for e in events if e.kind not in {"loaded", "disabled"}
    ]
    return manager.registry(), problems


def tool_descriptions(registry: ToolRegistry | None = None) -> dict[str, str]:
    """``module -> one line`` for every registered tool module, sorted by name."""
    if registry is None:
        registry, _ = load_registry()
    return {
        k: v for k, v in sorted(registry.descriptions().items()) if not k.startswith("toolsmith")
    }
