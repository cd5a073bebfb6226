"""Bundled plugin: files in the workspace folder (``files.list/read/write/move``).

Every path is relative to the workspace and must stay inside it after resolving ``..`` and
symlinks; anything else raises PermissionError. It must not touch any other folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from macaron_local.agent.tools import tool_context
from macaron_local.plugins import hookimpl


def _inside(path: str) -> Path:
    root = tool_context().workspace.resolve()
    root.mkdir(parents=True, exist_ok=True)
    full = (root / str(path)).resolve()
    if full != root and root not in full.parents:
        raise PermissionError(f"{path} is outside the workspace")
    return full


def files_list(path: str = ".") -> list[str]:
    """Names in a workspace folder, sorted; folders end with '/'."""
    folder = _inside(path)
    if not folder.is_dir():
        raise FileNotFoundError(path)
    return sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())


def files_read(path: str) -> str:
    """The text of a workspace file; FileNotFoundError if missing."""
    full = _inside(path)
    if not full.is_file():
        raise FileNotFoundError(path)
    return full.read_text(encoding="utf-8", errors="replace")


def files_write(path: str, text: str) -> int:
    """Write (overwrite) a workspace file, creating folders; returns characters written."""
    full = _inside(path)
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(str(text), encoding="utf-8")
    return len(str(text))


def files_move(src: str, dst: str) -> str:
    """Move or rename inside the workspace; returns the new relative path."""
    a, b = _inside(src), _inside(dst)
    if not a.exists():
        raise FileNotFoundError(src)
    b.parent.mkdir(parents=True, exist_ok=True)
    a.rename(b)
    return b.relative_to(tool_context().workspace.resolve()).as_posix()


@hookimpl
def register_tools(register: Any) -> None:
    register.module("files", "list, read, write and move files in the workspace folder")
    register(files_list, name="files.list")
    register(files_read, name="files.read")
    register(files_write, name="files.write", side_effect=True)
    register(files_move, name="files.move", side_effect=True)
