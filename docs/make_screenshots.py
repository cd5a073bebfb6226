"""The app's screenshots in docs/img/: the chat at 80x24, 140x45 and 200x60 (and the narrow
sessions overlay), taken with Textual's own ``save_screenshot`` (SVG) over the scripted
assistant, then converted to PNG with ``rsvg-convert`` (``apt-get install librsvg2-bin``).

    python docs/make_screenshots.py
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from macaron_local.facade import HEAD  # noqa: E402
from macaron_local.tui.app import make_app  # noqa: E402
from macaron_local.tui.settings import Settings  # noqa: E402
from macaron_local.tui.widgets.prompt import PromptInput  # noqa: E402
from macaron_local.turns.turn import TurnRequest  # noqa: E402
from tests.tui.scripted import ScriptedAssistant  # noqa: E402

OUT = ROOT / "docs" / "img"
SIZES = [(80, 24), (140, 45), (200, 60)]
CODE = (
    "Here is one way:\n\n```python\ndef reverse(items: list) -> list:\n"
    "    return items[::-1]  # a copy: slicing with a negative step walks from the end\n```\n\n"
    "It leaves the original list as it was."
)


def _assistant() -> tuple[ScriptedAssistant, str]:
    s = ScriptedAssistant()
    s.create_session("grocery list")
    sid = s.create_session("reverse a list").id
    s._commit(sid, "how do I reverse a list in python?", CODE, "L2", "auto", HEAD)
    s.run_turn(TurnRequest(sid, "thanks, and in one sentence?", label="L0"))
    s.retry(sid)  # a second branch of the last answer
    return s, sid


async def _shot(size: tuple[int, int], name: str, keys: tuple[str, ...] = ()) -> Path:
    scripted, sid = _assistant()
    app = make_app(Settings(), scripted)
    svg = Path(tempfile.mkdtemp()) / f"{name}.svg"
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.chat.query_one(PromptInput).cursor_blink = False
        await app.chat.open_session(sid)
        await pilot.pause(0.5)
        await pilot.press(*keys)
        await pilot.pause(0.5)
        app.save_screenshot(svg.name, str(svg.parent))
    png = OUT / f"{name}.png"
    subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], check=True)
    return png


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for w, h in SIZES:
        print(await _shot((w, h), f"tui-{w}x{h}"))
    print(await _shot((80, 24), "tui-80x24-sessions", ("ctrl+b",)))


if __name__ == "__main__":
    asyncio.run(main())
