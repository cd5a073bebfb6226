"""Pixel snapshots of the help, profiles and settings screens (pytest-textual-snapshot).

Update after an intended visual change with ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and review the SVGs under ``__snapshots__``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.settings import Settings
from tests.tui.conftest import SIZE
from tests.tui.scripted import ScriptedAssistant

pytest.importorskip("pytest_textual_snapshot")


def _app(tmp_path: Path, **settings: object) -> MacaronApp:
    return make_app(Settings(**settings), ScriptedAssistant(),  # type: ignore[arg-type]
                    settings_file=tmp_path / "settings.toml")


def test_help_screen(snap_compare, tmp_path: Path) -> None:  # noqa: ANN001
    assert snap_compare(_app(tmp_path), terminal_size=SIZE, press=["f1"])


def test_profiles_screen(snap_compare, tmp_path: Path) -> None:  # noqa: ANN001
    assert snap_compare(_app(tmp_path), terminal_size=SIZE, press=["f2"])


def test_settings_screen(snap_compare, tmp_path: Path) -> None:  # noqa: ANN001
    assert snap_compare(_app(tmp_path), terminal_size=SIZE, press=["f3"])
