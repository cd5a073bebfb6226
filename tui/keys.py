"""Key remaps checked against what would shadow them.

A non-priority binding acts only when no widget nearer the focus binds the same key: the input
box (a TextArea) binds ``ctrl+y`` (redo), ``ctrl+u``, ``ctrl+z``..., the session list Up/Down and
Enter. ``conflicts`` lists every remapped key that such a widget, or another of the app's own
bindings in the same place, already holds, so Settings and the start can warn. Owns only the
check; the app applies the keymap.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding
from textual.widgets import Input, ListView, TextArea

# the widgets that hold the focus where each group of bindings is meant to act
FOCUSED = {
    "app": (("the input box", TextArea),),
    "chat": (("the input box", TextArea),),
    "sessions": (("the session list", ListView), ("the search box", Input)),
}
SHARED = {"app": "chat", "chat": "app"}  # app keys act on the chat screen too


def _keys(spec: str) -> list[str]:
    return [k.strip() for k in spec.split(",") if k.strip()]


def _widget_keys(cls: type) -> set[str]:
    return {k for b in cls.BINDINGS for k in _keys(b.key if isinstance(b, Binding) else b[0])}


def conflicts(bindings: Iterable[tuple[str, Binding]], keymap: dict[str, str]) -> list[str]:
    """One sentence per remapped key that will not reach its binding (or takes another's).
    ``bindings`` are (where, binding) as on the help screen; ``where`` is the id's prefix."""
    table = [
        (b.id.split(".")[0], b.id, _keys(keymap.get(b.id, b.key))) for _, b in bindings if b.id
    ]
    out = []
    for group, bid, keys in table:
        if bid not in keymap:
            continue
        for key in keys:
            for name, cls in FOCUSED.get(group, ()):
                if key in _widget_keys(cls) and not _is_priority(bindings, bid):
                    out.append(f"{bid}={key}: {name} uses {key} itself, so it never gets there")
            others = [
                other
                for g, other, ks in table
                if other != bid and key in ks and g in (group, SHARED.get(group))
            ]
            if others:
                out.append(f"{bid}={key}: {', '.join(others)} has {key} too")
    return out


def _is_priority(bindings: Iterable[tuple[str, Binding]], bid: str) -> bool:
    return any(b.id == bid and b.priority for _, b in bindings)
