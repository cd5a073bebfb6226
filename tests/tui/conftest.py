"""Fixtures for the app tests: a scripted assistant, an app over it, and Pilot helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.screens.chat import ChatScreen
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.prompt import PromptInput
from tests.tui.scripted import ScriptedAssistant

SIZE = (140, 40)


@pytest.fixture
def scripted() -> ScriptedAssistant:
    return ScriptedAssistant()


@pytest.fixture
def app(scripted: ScriptedAssistant, tmp_path: Path) -> MacaronApp:
    settings = Settings(export_dir=tmp_path / "exports")
    return make_app(settings, scripted, settings_file=tmp_path / "settings.toml")


@pytest.fixture
def notes(app: MacaronApp) -> list[str]:
    """Every notification the app shows (title and message), in order."""
    seen: list[str] = []
    original = app.notify

    def record(message: str, **kwargs: object) -> None:
        seen.append(f"{kwargs.get('title', '')}: {message}")
        original(message, **kwargs)  # type: ignore[arg-type]

    app.notify = record  # type: ignore[method-assign]
    return seen


async def wait_for(pilot: Pilot, cond: Callable[[], object], timeout: float = 120.0) -> None:
    """Let the app run until ``cond()`` is true (fails the test after ``timeout``, which is
    generous: it only bounds a failure, and a busy machine is slow)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {cond}")
        await pilot.pause(0.02)


def chat(pilot: Pilot) -> ChatScreen:
    return pilot.app.chat  # type: ignore[attr-defined]


async def send(pilot: Pilot, text: str, *, wait: bool = True) -> None:
    """Type ``text`` into the input and press Enter; wait for the turn to finish."""
    await pilot.pause()
    prompt = chat(pilot).query_one(PromptInput)
    prompt.focus()
    prompt.load_text(text)
    await pilot.press("enter")
    if wait:
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
