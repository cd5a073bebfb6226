"""The app's entry point: read the settings, build the assistant, run, close.

``main`` is what ``macaron`` with no arguments and ``python -m macaron_local.tui`` call. A broken
settings file does not stop the app: the defaults are used and a notice says why.
"""

from __future__ import annotations

from macaron_local.errors import MacaronError
from macaron_local.facade import Assistant
from macaron_local.tui.app import make_app
from macaron_local.tui.history import history_path
from macaron_local.tui.settings import Settings, load_settings, settings_path


def main(profile: str | None = None) -> int:
    """Run the app until the user quits; returns the exit code."""
    notices: list[str] = []
    try:
        settings = load_settings()
    except MacaronError as exc:
        settings = Settings()
        notices.append(f"{exc} — {exc.hint}" if exc.hint else str(exc))
    assistant = Assistant(profile or settings.profile)
    app = make_app(
        settings,
        assistant,
        settings_file=settings_path(),
        history_file=history_path(),
        notices=tuple(notices),
    )
    try:
        app.run()
    finally:  # quitting is quick: summaries not yet written are written at the next start
        print("closing…", flush=True)
        assistant.close(finish_summaries=False)
    return app.return_code or 0
