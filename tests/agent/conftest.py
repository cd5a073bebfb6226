"""Fixtures for the agent tests: a small sandbox policy, the bundled tools, a fixed clock."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolContext, ToolRegistry
from macaron_local.plugins.manager import PluginManager

NOW = datetime(2025, 3, 14, 10, 30)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
def policy(workspace: Path) -> SandboxPolicy:
    return SandboxPolicy(
        workspace=str(workspace),
        cpu_seconds=5.0,
        wall_seconds=20.0,
        memory_mb=256,
        output_chars=2000,
    )


@pytest.fixture
def context(workspace: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=workspace, data_dir=tmp_path / "data", clock=lambda: NOW)


@pytest.fixture(scope="session")
def bundled_registry() -> ToolRegistry:
    manager = PluginManager(entry_points=False, user_dir=Path("/nonexistent"))
    manager.load()
    return manager.registry()
