"""The input's history of sent messages, kept per user across restarts.

A JSON-lines file under the user's data folder (``macaron_local.paths.data_dir()/tui``), one
message per line, oldest first, at most ``limit`` (``history_size``) kept. A file that cannot
be read is an empty history (it is a convenience, not a record: the store holds the turns).
"""

from __future__ import annotations

import json
from pathlib import Path

from macaron_local import paths


def history_path() -> Path:
    return paths.data_dir() / "tui" / "history.jsonl"


def load_history(path: Path, limit: int) -> list[str]:
    """The last ``limit`` messages sent (oldest first)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            text = json.loads(line)
        except ValueError:
            continue
        if isinstance(text, str) and text:
            out.append(text)
    return out[-limit:] if limit else []


def save_history(path: Path, sent: list[str]) -> None:
    """Write the history (the input's list, already trimmed to its size)."""
    paths.ensure(path.parent)
    body = "".join(json.dumps(text, ensure_ascii=False) + "\n" for text in sent)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(path)
