"""The HTML export opens in headless Chromium and shows the document's components and state."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from macaron_local.genui.catalogue import Document
from macaron_local.genui.html import to_html
from tests.genui.conftest import NEW_STATE, SECRET

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chrome-profile"
    return subprocess.run(
        [CHROMIUM or "chromium", *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


class Dom(HTMLParser):
    """What the browser's DOM holds: components in order, and form controls with values."""

    def __init__(self) -> None:
        super().__init__()
        self.components: list[tuple[str, str]] = []
        self.controls: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "data-id" in a:
            self.components.append((a["data-id"] or "", a.get("data-kind") or ""))
        if tag == "input":
            self.controls.append(a)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_export_opens_in_chromium_with_the_same_components_and_state(
    sink: Document, tmp_path: Path
) -> None:
    page = tmp_path / "ui.html"
    page.write_text(to_html(sink, NEW_STATE), encoding="utf-8")
    dom = Dom()
    dom.feed(chromium(tmp_path, page, "--dump-dom").stdout)
    assert dom.components == [(c.id, c.type) for c in sink.walk()]
    by_name = {(c.get("name"), c.get("value")): c for c in dom.controls}
    assert "checked" in by_name[("plan", "Team")] and "checked" not in by_name[("plan", "Pro")]
    assert "checked" in by_name[("extras", "Backup")]
    assert ("name", "Grace") in by_name and ("budget", "65") in by_name
    assert ("start", "2026-02-01") in by_name and ("email", "ada@example.org") in by_name
    text = " ".join(dom.text)
    table = text.split("Price", 1)[1].split()
    assert table[:4] == ["Team", "23", "Basic", "8"]  # filtered by "a", sorted by price desc
    assert SECRET not in text and not any(SECRET in str(c) for c in dom.controls)

    shot = tmp_path / "ui.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=900,1800")
    from PIL import Image

    with Image.open(shot) as img:
        assert img.size == (900, 1800)
        colours = img.convert("RGB").getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50  # text, borders, controls and charts drew something
    assert any(rgb == (0x4A, 0x7B, 0xD0) for _, rgb in colours)  # the bar chart's fill


def test_noai_values_are_exported_only_when_asked(sink: Document) -> None:
    assert SECRET not in to_html(sink, NEW_STATE)
    assert SECRET in to_html(sink, NEW_STATE, include_noai=True)
