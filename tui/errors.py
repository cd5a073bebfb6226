"""The edge where errors become notifications: what went wrong and what to do.

A :class:`MacaronError` shows its message and hint; anything else is reported as unexpected
with a pointer to where to look. Nothing here raises.
"""

from __future__ import annotations

from textual.app import App

from macaron_local.errors import MacaronError, TurnError

GENERIC_HINT = "this is a bug; please report it with the steps that led to it"


def message_for(exc: BaseException) -> tuple[str, str]:
    """(title, body) for a notification about ``exc``."""
    if isinstance(exc, MacaronError):
        title = "Turn rolled back" if isinstance(exc, TurnError) else type(exc).__name__
        hint = exc.hint or _default_hint(exc)
        return title, f"{exc}\nWhat to do: {hint}"
    return "Unexpected error", f"{type(exc).__name__}: {exc}\nWhat to do: {GENERIC_HINT}"


def _default_hint(exc: MacaronError) -> str:
    if isinstance(exc, TurnError):
        return "nothing was saved; send the message again or press Ctrl+R to retry"
    return "check the message above; /help lists what the app can do"


def report(app: App[object], exc: BaseException) -> None:
    """Show ``exc`` as an error notification."""
    title, body = message_for(exc)
    app.notify(body, title=title, severity="error", timeout=10, markup=False)
