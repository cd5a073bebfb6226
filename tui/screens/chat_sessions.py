"""Session actions of the chat screen: open, new, rename, delete with undo, export, import, search.

A mixin for ``ChatScreen`` (kept apart so each file stays readable); it uses the screen's
assistant, sidebar and history. Store errors become notifications. Handlers use the
``on_<widget>_<message>`` names: ``@on`` decorators are only collected on Textual classes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from macaron_local.errors import MacaronError
from macaron_local.tui.errors import report
from macaron_local.tui.screens.ask import AskScreen
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from macaron_local.tui.screens.chat import ChatScreen

    _Base = ChatScreen
else:
    _Base = object


class SessionActions(_Base):
    """Everything about sessions, for the chat screen."""

    last_deleted: str | None = None
    not_learning = False  # the open chat is marked "do not learn from this chat"

    async def refresh_sessions(self) -> None:
        sidebar = self.query_one(Sidebar)
        query = sidebar.query_one("#search").value  # type: ignore[attr-defined]
        try:
            if query.strip():
                await sidebar.show_hits(self.assistant.search(query))
            else:
                sessions = self.assistant.list_sessions()
                await sidebar.show_sessions(sessions, self.session_id)
                if self.session_id is not None:
                    self.not_learning = any(s.excluded for s in sessions if s.id == self.session_id)
        except MacaronError as exc:
            report(self.app, exc)

    async def open_session(self, session_id: str | None, turn_id: str | None = None) -> None:
        if session_id != self.session_id:
            self.not_learning = False  # refresh_sessions reads the mark of the new one
        self.session_id, self.editing = session_id, False
        self.sub_title = self._title(session_id)
        await self.show_history(focus_turn=turn_id)
        await self.refresh_sessions()

    def _title(self, session_id: str | None) -> str:
        if session_id is None:
            return "new session"
        titles = {s.id: s.title for s in self.assistant.list_sessions()}
        return titles.get(session_id) or "Untitled"

    async def on_sidebar_picked(self, event: Sidebar.Picked) -> None:
        if self.job is not None:
            self.notify("A turn is running; wait for it or press Esc first.", severity="warning")
            return
        await self.open_session(event.session_id, event.turn_id)
        self.close_overlays()
        self.action_focus_prompt()

    async def on_sidebar_search(self, event: Sidebar.Search) -> None:
        await self.refresh_sessions()

    async def on_sidebar_act(self, event: Sidebar.Act) -> None:
        sid = event.session_id
        if event.action == "rename":
            await self.rename("", sid)
        elif event.action == "delete":
            await self.action_delete_session(sid)
        elif event.action == "undo":
            await self.action_undo_delete()
        elif event.action == "export":
            await self.export("", sid)

    async def toggle_learning(self) -> None:
        """``/nolearn``: do not learn from this chat (deletes what was kept), or learn again."""
        excluded = not self.not_learning
        if self.session_id is not None:
            try:
                removed = self.assistant.exclude_session(self.session_id, excluded)
            except MacaronError as exc:
                report(self.app, exc)
                return
        else:
            removed = 0  # applied when the first message creates the session
        self.not_learning = excluded
        await self.refresh_sessions()
        self.poll_status()
        if excluded:
            gone = f" and deleted {removed} kept turn(s)" if removed else ""
            self.notify(
                f"Nothing from this chat is kept for learning{gone}. /nolearn again to undo.",
                title="Do not learn from this chat",
            )
        else:
            self.notify(
                "This chat may be learned from again (when experience is on).",
                title="Learning from this chat",
            )

    def action_search(self) -> None:
        sidebar = self.query_one(Sidebar)
        self.show_panel(sidebar, True)  # an overlay on a narrow terminal, never a hidden box
        sidebar.query_one("#search").focus()

    async def action_new_session(self, title: str = "") -> None:
        self.action_focus_prompt()  # first: what is typed while the chat changes goes there
        if self.job is not None:
            self.notify("A turn is running; wait for it or press Esc first.", severity="warning")
            return
        try:
            sid = self.assistant.create_session(title).id if title else None
        except MacaronError as exc:
            report(self.app, exc)
            return
        await self.open_session(sid)
        self.query_one(Inspector).show(None)

    async def rename(self, title: str, session_id: str | None = None) -> None:
        sid = session_id or self.session_id
        if sid is None:
            self.notify("Send a message first: this session is not saved yet.", severity="warning")
            return
        if not title:
            self.app.push_screen(
                AskScreen("New title for this session:", self._title(sid)),
                lambda t: self._renamed(sid, t),
            )
            return
        await self._renamed(sid, title)

    async def _renamed(self, sid: str, title: str | None) -> None:
        if not title:
            return
        try:
            self.assistant.rename_session(sid, title)
        except MacaronError as exc:
            report(self.app, exc)
            return
        if sid == self.session_id:
            self.sub_title = title
        await self.refresh_sessions()
        self.notify(f"Renamed to “{title}”.")

    async def action_delete_session(self, session_id: str | None = None) -> None:
        sid = session_id or self.session_id
        if sid is None or (sid == self.session_id and self.job is not None):
            self.notify("Nothing to delete here.", severity="warning")
            return
        title = self._title(sid)
        try:
            self.assistant.delete_session(sid)
        except MacaronError as exc:
            report(self.app, exc)
            return
        self.last_deleted = sid
        if sid == self.session_id:
            await self.open_session(None)
        else:
            await self.refresh_sessions()
        self.notify(f"Deleted “{title}”. Type /undo (or press u in the list) to restore it.")

    async def action_undo_delete(self) -> None:
        sid = self.last_deleted
        if sid is None:
            self.notify("No deleted session to restore.", severity="warning")
            return
        try:
            self.assistant.restore_session(sid)
        except MacaronError as exc:
            report(self.app, exc)
            return
        self.last_deleted = None
        await self.open_session(sid)
        self.notify(f"Restored “{self._title(sid)}”.")

    async def export(self, arg: str, session_id: str | None = None) -> None:
        sid = session_id or self.session_id
        if sid is None:
            self.notify("Nothing to export yet.", severity="warning")
            return
        words = arg.split(maxsplit=1)
        if words and words[0].lower() == "html":
            self.export_ui(words[1] if len(words) > 1 else "")
            return
        fmt = "json" if words and words[0].lower() == "json" else "markdown"
        if words and words[0].lower() in {"md", "markdown", "json"}:
            words = words[1:]
        try:
            text = self.assistant.export_session(sid, fmt)
            target = Path(words[0]).expanduser() if words else self._export_path(sid, fmt)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except MacaronError as exc:
            report(self.app, exc)
            return
        except OSError as exc:
            report(
                self.app,
                MacaronError(
                    f"could not write the export: {exc}", hint="give another path: /export md PATH"
                ),
            )
            return
        self.notify(f"Exported to {target}")

    def export_ui(self, path: str = "") -> None:
        """``/export html [PATH]``: the selected (else the last) generated UI, with what the user
        set in it, as one self-contained page (no script; private fields left out)."""
        from macaron_local.genui import to_html

        views = [
            w.ui_view
            for w in self.query(AssistantMessage)
            if w.ui_view is not None and w.ui_view.document is not None
        ]
        widget = self.target()
        view = widget.ui_view if widget is not None and widget.ui_view in views else None
        view = view or (views[-1] if views else None)
        if view is None or view.document is None:
            self.notify("No generated interface to export in this chat.", severity="warning")
            return
        doc = view.document
        slug = re.sub(r"[^a-z0-9]+", "-", doc.title.lower()).strip("-")[:40] or "interface"
        folder = Path(self.app.settings.export_dir or Path.cwd())  # type: ignore[attr-defined]
        target = Path(path).expanduser() if path else folder.expanduser() / f"macaron-{slug}.html"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(to_html(doc, view.read_state()), encoding="utf-8")
        except OSError as exc:
            report(
                self.app,
                MacaronError(
                    f"could not write the page: {exc}", hint="give another path: /export html PATH"
                ),
            )
            return
        self.notify(f"Exported the interface to {target}")

    def _export_path(self, sid: str, fmt: str) -> Path:
        folder = self.app.settings.export_dir or Path.cwd()  # type: ignore[attr-defined]
        slug = re.sub(r"[^a-z0-9]+", "-", self._title(sid).lower()).strip("-")[:40] or "session"
        ext = "json" if fmt == "json" else "md"
        return Path(folder).expanduser() / f"macaron-{slug}-{sid[-6:]}.{ext}"

    async def _import_answer(self, path: str | None) -> None:
        if path:
            await self.import_file(path)

    async def import_file(self, path: str) -> None:
        if not path:
            self.app.push_screen(
                AskScreen("Import a JSON export from:", placeholder="path"), self._import_answer
            )
            return
        try:
            text = Path(path).expanduser().read_text(encoding="utf-8")
            sid = self.assistant.import_session(text)
        except MacaronError as exc:
            report(self.app, exc)
            return
        except OSError as exc:
            report(
                self.app,
                MacaronError(
                    f"could not read {path}: {exc}",
                    hint="check the path of the exported .json file",
                ),
            )
            return
        await self.open_session(sid)
        self.notify(f"Imported “{self._title(sid)}”.")
