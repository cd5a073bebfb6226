"""The one-line descriptions of the agent's built-in tools, as the router and L1 see them.

The agent/plugins capability will register tools through plugins; until then this is the list
the default adapters were trained with (docs/formats.md, "L1 REPL format").
"""

from __future__ import annotations

BUILTIN_TOOLS: dict[str, str] = {
    "notes": "save, search and read the user's notes",
    "todos": "add, list, complete and total the user's todos (due dates, estimates)",
    "reminders": "set and list reminders at a date and time",
    "files": "list, read, write and move files in the workspace folder",
    "clock": "the current date and time, days until a date",
    "units": "convert units and do arithmetic on the user's numbers",
    "shell": "run a shell command (always asks the user first)",
}


def tool_descriptions() -> dict[str, str]:
    return dict(BUILTIN_TOOLS)
