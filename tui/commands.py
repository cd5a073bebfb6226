"""Slash commands: their table (for /help and the palette) and parsing.

Owns only the words; the chat screen carries them out. ``/chat``, ``/agent``, ``/code`` and
``/ui`` pin a turn to the profile's specialist with that role (chat, agent, coding, genui):
with text, that one turn; alone, every turn until ``/auto``.
"""

from __future__ import annotations

from dataclasses import dataclass

PINS = {"chat": "chat", "agent": "agent", "code": "coding", "ui": "genui"}  # command -> role

COMMANDS: dict[str, str] = {
    "chat": "pin to the Chat specialist (with text: this turn; alone: until /auto)",
    "agent": "pin to the Agent specialist",
    "code": "pin to the Coding specialist",
    "ui": "pin to the GenUI specialist",
    "auto": "let the router choose again",
    "remote": "send this turn to the remote server <text> (alone: where it is)",
    "new": "start a new session [title]",
    "rename": "rename this session <title>",
    "delete": "delete this session (undo with /undo)",
    "undo": "restore the last deleted session",
    "export": "export this session [md|json] [path], or its interface [html] [path]",
    "import": "import a JSON export <path>",
    "retry": "answer the last message again (a new branch)",
    "edit": "edit the last message [new text] (a new branch)",
    "copy": "copy the selected answer's code (or the answer)",
    "good": "thumbs up on the selected answer",
    "bad": "thumbs down on the selected answer",
    "correct": "correct the selected answer <better answer>",
    "nolearn": "do not learn from this chat (again: learn from it)",
    "refine": "learn a new specialist revision from experience",
    "timings": "show or hide hop timings",
    "inspector": "show or hide the inspector",
    "profiles": "profiles and models",
    "settings": "settings",
    "theme": "switch light / dark",
    "help": "keys and commands",
    "quit": "leave the app",
}


@dataclass(frozen=True)
class Slash:
    """A parsed ``/name arg`` line."""

    name: str
    arg: str


def parse(text: str) -> Slash | None:
    """``/code fix this`` -> Slash("code", "fix this"); None if ``text`` is not a command.

    ``//text`` sends ``/text`` as a message (an escape for messages that start with a slash).
    """
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, arg = text[1:].partition(" ")
    return Slash(name.strip().lower(), arg.strip())
