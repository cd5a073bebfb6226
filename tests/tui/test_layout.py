"""The layout at 80x24 and 200x60: overlay panels on a narrow terminal, wrapped code, and a
status line that keeps the key hint that matters now."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input, Static
from textual.widgets.markdown import MarkdownFence

from macaron_local.facade import HEAD
from macaron_local.tui.app import MacaronApp
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.prompt import PromptInput
from macaron_local.tui.widgets.sidebar import Sidebar
from tests.tui.conftest import chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio
NARROW, BIG = (80, 24), (200, 60)
LONG_LINE = "    return items[::-1]  # " + "a comment that runs past any chat's edge " * 3


def visible(widget: object) -> bool:
    region = widget.region  # type: ignore[attr-defined]
    return bool(widget.display and region.width > 0 and region.height > 0)  # type: ignore[attr-defined]


async def test_narrow_panels_are_overlays_that_the_keys_show(app: MacaronApp) -> None:
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, "about cats")
        sidebar, inspector = app.chat.query_one(Sidebar), app.chat.query_one(Inspector)
        assert not visible(sidebar) and not visible(inspector)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert visible(sidebar) and app.focused is sidebar.query_one("ListView")
        await pilot.press("escape")
        await pilot.pause()
        assert not visible(sidebar) and app.focused is app.chat.query_one(PromptInput)
        await pilot.press("ctrl+f", *"cats")
        await pilot.pause()
        search = sidebar.query_one("#search", Input)
        assert visible(search) and search.value == "cats"  # typed into a box the user sees
        await pilot.press("escape")  # Input has no Esc of its own: the overlay closes
        await pilot.press("f4")
        await pilot.pause()
        assert visible(inspector) and not visible(sidebar)
        assert "Turn " in str(inspector.query_one("#inspector-body", Static).render())
        await pilot.press("f4")
        await pilot.pause()
        assert not visible(inspector)
        await pilot.resize_terminal(*BIG)
        await wait_for(pilot, lambda: visible(sidebar) and visible(inspector))


async def test_big_terminal_shows_both_panels_and_narrow_toggles_leave_them(
    app: MacaronApp,
) -> None:
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("ctrl+b", "escape", "f4", "f4")
        await pilot.resize_terminal(*BIG)
        await pilot.pause()
        assert visible(app.chat.query_one(Sidebar)) and visible(app.chat.query_one(Inspector))


async def test_code_blocks_wrap_instead_of_being_cut(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    sid = scripted.create_session("long code").id
    answer = f"Here:\n\n```python\ndef reverse(items):\n{LONG_LINE}\n```\n"
    scripted._commit(sid, "reverse", answer, "L2", "auto", HEAD)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        await app.chat.open_session(sid)
        await wait_for(pilot, lambda: app.chat.query(MarkdownFence))
        await pilot.pause()
        fence = app.chat.query(MarkdownFence).last()
        assert fence.max_scroll_x == 0  # nothing past the right edge
        assert fence.size.height >= 4  # the long line wrapped onto more rows


async def test_the_status_keeps_esc_cancels_at_80_columns(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    async with app.run_test(size=NARROW) as pilot:
        await send(pilot, "/agent")
        await send(pilot, "/nolearn")
        await send(pilot, "a long question", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        status = app.chat.query_one("#status", Static)
        await wait_for(pilot, lambda: "Esc cancels" in str(status.content))
        shown = str(status.content)[: status.content_region.width]
        assert "Esc cancels" in shown
        scripted.hold.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
