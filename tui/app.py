"""The Textual application and its factory.

``make_app(settings, assistant)`` builds the app from what the entry point made; nothing is
opened here. The chat screen shows at once; the assistant loads the model in the background
and the status line says when it is ready. App-wide keys live here, each with an id so the
settings file can remap it.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.binding import Binding

from macaron_local import paths
from macaron_local.errors import MacaronError
from macaron_local.facade import AssistantProtocol, RefineHandle
from macaron_local.tui.errors import report
from macaron_local.tui.keys import conflicts
from macaron_local.tui.palette import MacaronCommands
from macaron_local.tui.screens.chat import ChatScreen
from macaron_local.tui.screens.help import HelpScreen
from macaron_local.tui.screens.profiles import ProfilesScreen
from macaron_local.tui.screens.refine import RefineScreen
from macaron_local.tui.screens.settings import SettingsScreen
from macaron_local.tui.settings import THEMES, Settings, save_settings
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.sidebar import Sidebar


class MacaronApp(App[None]):
    """macaron-local in the terminal."""

    CSS_PATH = "app.tcss"
    TITLE = "macaron"
    COMMANDS = App.COMMANDS | {MacaronCommands}
    # narrow terminals hide the inspector, then the sidebar (see app.tcss)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (90, "-medium"), (124, "-wide")]
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("f2", "profiles", "Profiles", id="app.profiles"),
        Binding("f3", "settings", "Settings", id="app.settings"),
        Binding("f8", "refine", "Refine", show=False, id="app.refine"),
        Binding("f12", "toggle_theme", "Theme", show=False, id="app.toggle_theme"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        assistant: AssistantProtocol,
        *,
        settings_file: Path | None = None,
        history_file: Path | None = None,
        notices: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.settings = settings
        self.assistant = assistant
        self.settings_file = settings_file
        self.history_file = history_file  # the input's history across restarts (None: not kept)
        self.notices = notices
        self.refine_handle: RefineHandle | None = None  # the refine run, if one was started

    def on_mount(self) -> None:
        self.apply_settings(self.settings)
        self.assistant.start()
        self.assistant.watch_reminders(self.remind)
        for notice in self.notices:
            self.notify(notice, severity="warning", timeout=10, markup=False)
        self.warn_key_conflicts(self.settings)
        listen = getattr(self.assistant, "set_reload_listener", None)  # the real facade's
        if listen is not None:
            listen(self.reload_notice)

    def reload_notice(self, kind: str, message: str) -> None:
        """Hot reload, from a watcher thread: a saved profile or plugin is live, or was refused
        (the old one still serves) and the notice names the file and line."""
        refused = kind.endswith("_error")
        self.call_from_thread(
            self.notify,
            message,
            title="Not reloaded" if refused else "Reloaded",
            severity="warning" if refused else "information",
            timeout=12 if refused else 4,
            markup=False,
        )

    def remind(self, reminder: dict) -> None:
        """A reminder fell due (called on the reminder clock's thread). Raises when the app
        cannot show it, so the reminder stays pending and fires at the next start."""
        self.call_from_thread(
            self.notify,
            str(reminder["text"]),
            title=f"Reminder · {reminder['at'].replace('T', ' ')}",
            severity="warning",
            timeout=60,
            markup=False,
        )

    def explain_experience(self) -> None:
        """First run (the user never chose): explain experience logging in a banner that asks
        without taking the input's keys (the chat screen calls this once it is mounted)."""
        try:
            status = self.assistant.experience_status()
        except MacaronError as exc:
            report(self, exc)
            return
        if status.choice is None:
            self.chat.show_explainer()

    def set_experience(self, on: bool | None) -> None:
        """Store the user's choice about experience logging (Settings and the banner)."""
        if on is None:
            return
        try:
            self.assistant.set_experience(on)
        except MacaronError as exc:
            report(self, exc)
            return
        self.notify(
            "Experience is kept on this machine for learning; Settings (F3) turns it "
            "off or purges it."
            if on
            else "Experience logging is off; Settings (F3) turns it on.",
            title="Experience",
            markup=False,
        )

    def get_default_screen(self) -> ChatScreen:
        return ChatScreen()

    @property
    def chat(self) -> ChatScreen:
        return next(s for s in self.screen_stack if isinstance(s, ChatScreen))

    def warn_key_conflicts(self, settings: Settings) -> list[str]:
        """Say which remapped keys a focused widget (or another binding) would take."""
        found = conflicts(self.all_bindings(), dict(settings.keys))
        if found:
            self.notify(
                "\n".join(found),
                title="Key remaps shadowed",
                severity="warning",
                timeout=15,
                markup=False,
            )
        return found

    def apply_settings(self, settings: Settings, *, save: bool = False) -> Path | None:
        """Use ``settings`` now (theme, keys); write them to the settings file when asked."""
        path = save_settings(settings, self.settings_file) if save else None
        self.settings = settings
        self.theme = THEMES[settings.theme]
        self.set_keymap(dict(settings.keys))
        return path

    async def run_slash(self, name: str, arg: str = "") -> None:
        """Run a slash command from anywhere (the command palette)."""
        await self.chat.run_slash(name, arg)

    @classmethod
    def all_bindings(cls) -> list[tuple[str, Binding]]:
        """(where, binding) for every key the user can remap (the help screen's rows)."""
        bindings = [("app", b) for b in cls.BINDINGS if isinstance(b, Binding)]
        for where, owner in (
            ("chat", ChatScreen),
            ("sessions", Sidebar),
            ("answer", AssistantMessage),
            ("refine", RefineScreen),
        ):
            bindings += [(where, b) for b in owner.BINDINGS if isinstance(b, Binding)]
        return bindings

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.all_bindings(), dict(self.settings.keys)))

    def action_profiles(self) -> None:
        if not isinstance(self.screen, ProfilesScreen):
            self.push_screen(ProfilesScreen())

    def action_settings(self) -> None:
        if not isinstance(self.screen, SettingsScreen):
            self.push_screen(SettingsScreen())

    def action_refine(self) -> None:
        if not isinstance(self.screen, RefineScreen):
            self.push_screen(RefineScreen())

    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """The palette's "Screenshot": into the Downloads folder when there is one, else the
        export folder, else the current one (Textual's default fails without ~/Downloads)."""
        return super().deliver_screenshot(filename, path or str(self.screenshot_dir()), time_format)

    def screenshot_dir(self) -> Path:
        import platformdirs

        downloads = platformdirs.user_downloads_path()
        if downloads.is_dir():
            return downloads
        folder = self.settings.export_dir
        if folder is None:
            return Path.cwd()
        return paths.ensure(Path(folder).expanduser())

    def action_toggle_theme(self) -> None:
        """Light / dark, kept in the settings file (when there is one)."""
        theme = "light" if self.settings.theme == "dark" else "dark"
        try:
            self.apply_settings(
                self.settings.model_copy(update={"theme": theme}),
                save=self.settings_file is not None,
            )
        except Exception as exc:  # noqa: BLE001 - a notice, not a crash
            report(self, exc)


def make_app(
    settings: Settings,
    assistant: AssistantProtocol,
    *,
    settings_file: Path | None = None,
    history_file: Path | None = None,
    notices: tuple[str, ...] = (),
) -> MacaronApp:
    """The app over ``assistant`` with ``settings`` (the entry point builds both)."""
    return MacaronApp(
        settings,
        assistant,
        settings_file=settings_file,
        history_file=history_file,
        notices=notices,
    )
