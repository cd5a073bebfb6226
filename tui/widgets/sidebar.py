"""The sessions sidebar: a search box over a list of sessions (or of search hits).

Shows what the screen gives it (``show_sessions`` / ``show_hits``) and posts ``Search`` while
the user types and ``Picked`` when a row is chosen; it never calls the assistant itself. A chat
marked "do not learn from this chat" starts with ``⊘``.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, ListItem, ListView

from macaron_local.facade import SearchItem, SessionItem

NOLEARN = "⊘ "  # marks a chat the assistant does not learn from (/nolearn)


def hit_text(hit: SearchItem) -> Text:
    """A search hit as shown: a turn hit is ``↳`` its snippet under its chat's title, a title
    hit is ``▣`` the title; the matched words (``[...]`` in the store's snippet) stand out."""
    out = Text()
    if hit.turn_id is not None:
        out.append(f"{hit.session_title or 'Untitled'}\n", style="dim")
        out.append("↳ ")
    else:
        out.append("▣ ", style="bold")
    for i, part in enumerate(re.split(r"\[([^\]]*)\]", hit.snippet)):
        out.append(part, style="bold reverse" if i % 2 else "")
    return out


class SessionRow(ListItem):
    """One session, or one search hit inside a session."""

    def __init__(
        self, session_id: str, text: str, turn_id: str | None = None, shown: Text | None = None
    ) -> None:
        super().__init__(Label(shown or text, markup=False))
        self.session_id, self.turn_id, self.text = session_id, turn_id, text


class Sidebar(Vertical):
    """Search plus the session list."""

    DEFAULT_CSS = """
    Sidebar { width: 30; }
    Sidebar ListView { height: 1fr; }
    """

    BINDINGS = [
        Binding("r", "act('rename')", "Rename", id="sessions.rename"),
        Binding("d,delete", "act('delete')", "Delete", id="sessions.delete"),
        Binding("u", "act('undo')", "Undo delete", id="sessions.undo"),
        Binding("e", "act('export')", "Export", id="sessions.export"),
    ]

    class Act(Message):
        """A session action on the highlighted row (``session_id`` None: none highlighted)."""

        def __init__(self, action: str, session_id: str | None) -> None:
            super().__init__()
            self.action, self.session_id = action, session_id

    class Search(Message):
        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Picked(Message):
        def __init__(self, session_id: str, turn_id: str | None) -> None:
            super().__init__()
            self.session_id, self.turn_id = session_id, turn_id

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search sessions…", id="search")
        yield ListView(id="sessions")

    @property
    def rows(self) -> list[SessionRow]:
        return list(self.query(SessionRow))

    @property
    def highlighted(self) -> SessionRow | None:
        item = self.query_one(ListView).highlighted_child
        return item if isinstance(item, SessionRow) else None

    async def show_sessions(self, sessions: list[SessionItem], current: str | None) -> None:
        rows = [
            SessionRow(s.id, f"{NOLEARN if s.excluded else ''}{s.title or 'Untitled'}")
            for s in sessions
        ]
        await self._fill(rows, next((i for i, s in enumerate(sessions) if s.id == current), None))

    async def show_hits(self, hits: list[SearchItem]) -> None:
        rows = [
            SessionRow(
                h.session_id,
                f"{h.session_title or 'Untitled'}: {h.snippet}",
                h.turn_id,
                shown=hit_text(h),
            )
            for h in hits
        ]
        await self._fill(rows, None)

    async def _fill(self, rows: list[SessionRow], index: int | None) -> None:
        view = self.query_one(ListView)
        await view.clear()
        if not view.is_attached:  # the app closed meanwhile (quit as a turn ended): nothing to show
            return
        await view.extend(rows)
        view.index = index

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Search(event.value))

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        if isinstance(event.item, SessionRow):
            self.post_message(self.Picked(event.item.session_id, event.item.turn_id))

    def action_act(self, action: str) -> None:
        row = self.highlighted
        self.post_message(self.Act(action, row.session_id if row else None))
