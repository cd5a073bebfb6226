"""Command palette provider (Ctrl+P): the slash commands and the app's screens, fuzzy-found."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from macaron_local.tui.commands import COMMANDS

# commands that need an argument are left to the input line
NEEDS_TEXT = {"rename", "import", "correct"}


class MacaronCommands(Provider):
    """Every slash command that works without an argument."""

    def _commands(self) -> list[tuple[str, str]]:
        return [(name, what) for name, what in COMMANDS.items() if name not in NEEDS_TEXT]

    async def _run(self, name: str) -> None:
        await self.app.run_slash(name)  # type: ignore[attr-defined]

    async def discover(self) -> Hits:
        for name, what in self._commands():
            yield DiscoveryHit(f"/{name}", partial(self._run, name), help=what)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, what in self._commands():
            score = matcher.match(f"/{name} {what}")
            if score > 0:
                yield Hit(score, matcher.highlight(f"/{name}"), partial(self._run, name), help=what)
