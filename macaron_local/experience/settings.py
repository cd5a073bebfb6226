"""Whether experience is kept: the user's own choice, else the profile's ``[experience]``.

Owns the user setting file ``<config>/experience.json`` (``{"opt_in": bool}``), written only by
an explicit ``macaron experience on|off`` (or the app's Settings), and the rule that decides:
the user's choice when they made one, else ``profile.experience.opt_in`` (off by default; a
profile that turns it on is a security-relevant change that needs approval). Must not: open the
store or create anything at import time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from macaron_local import paths

EXPLAINER = (
    "Experience logging is off unless you turn it on. When it is on, each turn you have with "
    "the assistant is kept in the local database on this computer: your request, which "
    "specialist answered and why (routed, sticky or pinned), the adapter revision and profile "
    "hash, the answer, your thumbs up/down, answers you corrected, retries and re-routes, and "
    "the outcome of tool and REPL runs. API keys, tokens, passwords, private keys and anything "
    "you mark [NoAI]...[/NoAI] are removed before anything is written. Nothing leaves this "
    'machine. `macaron refine run` learns from it. Exclude one chat with "do not learn from '
    'this chat"; see it with `macaron experience status|export`; delete it all with '
    "`macaron experience purge`."
)


def settings_path() -> Path:
    return paths.config_dir() / "experience.json"


def user_choice() -> bool | None:
    """The user's explicit opt-in (None: they never chose)."""
    path = settings_path()
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("opt_in") if isinstance(data, dict) else None
    return value if isinstance(value, bool) else None


def set_user_choice(opt_in: bool) -> Path:
    """Record the user's choice (atomic write)."""
    path = settings_path()
    paths.ensure(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"opt_in": opt_in}) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def enabled(profile: Any) -> bool:
    """Is experience kept under ``profile``? The user's choice wins; off by default."""
    choice = user_choice()
    if choice is not None:
        return choice
    return bool(profile.experience.opt_in)
