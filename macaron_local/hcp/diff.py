"""Semantic diff of two profiles, field by field, with security-relevant changes marked.

Owns the rules that decide which changes widen a security or privacy boundary and so need a
human approval before they are served: a wider tool allowlist, wider REPL permissions or limits,
a remote endpoint that changed or got enabled, more turns sent remote, experience logging turned
on or kept longer. Must not: read files or the store, or decide about approvals (``approvals.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypeAlias

from pydantic import JsonValue

from macaron_local.hcp.canonical import canonical_data
from macaron_local.hcp.schema import Profile

# a security rule: (dotted path, old value, new value, the new profile) -> why it matters
Rule: TypeAlias = Callable[[str, JsonValue, JsonValue, Profile], str | None]

_FS_ORDER = {"none": 0, "workspace": 1, "home": 2}


@dataclass(frozen=True)
class Change:
    """One changed field. ``old``/``new`` are JSON values; None means absent."""

    path: str
    old: JsonValue
    new: JsonValue
    security_relevant: bool
    reason: str

    def describe(self) -> str:
        mark = "!" if self.security_relevant else " "
        line = f"{mark} {self.path}: {_show(self.old)} -> {_show(self.new)}"
        return f"{line}  [SECURITY: {self.reason}]" if self.security_relevant else line


def diff_profiles(a: Profile, b: Profile) -> list[Change]:
    """Every field that differs from ``a`` to ``b``, sorted by path."""
    flat_a, flat_b = _flatten(canonical_data(a)), _flatten(canonical_data(b))
    changes = []
    for path in sorted(set(flat_a) | set(flat_b)):
        old, new = flat_a.get(path), flat_b.get(path)
        if old != new:
            reason = _security_reason(path, old, new, b)
            changes.append(Change(path, old, new, reason is not None, reason or ""))
    return changes


def security_changes(a: Profile, b: Profile) -> list[Change]:
    return [c for c in diff_profiles(a, b) if c.security_relevant]


def _flatten(data: dict[str, JsonValue], prefix: str = "") -> dict[str, JsonValue]:
    """Tables become dotted paths; arrays and scalars are leaves."""
    out: dict[str, JsonValue] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, path + "."))
        else:
            out[path] = value
    return out


def _security_reason(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    for prefix, rule in _RULES:
        if path == prefix or path.startswith(prefix + "."):
            return rule(path, old, new, b)
    return None


def _allow(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    before, after = _names(old), _names(new)
    wider = [p for p in after if not any(fnmatchcase(p, q) for q in before)]
    if wider:
        label = path.rsplit(".", 1)[-1]
        return f"wider tool allowlist for {label}: adds {', '.join(wider)}"
    return None


def _filesystem(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    if _FS_ORDER.get(str(new), 3) > _FS_ORDER.get(str(old), 0):
        return f"REPL filesystem access widened from {old} to {new}"
    return None


def _in_process(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    if new == "in-process" and old != "in-process":
        return "REPL without an OS sandbox: model-written code confined by an audit hook only"
    return None


def _turned_on(what: str) -> Rule:
    def rule(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
        return f"{what} turned on" if new is True and old is not True else None

    return rule


def _raised(what: str) -> Rule:
    def rule(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
        if isinstance(new, int | float) and (not isinstance(old, int | float) or new > old):
            return f"{what} raised from {old} to {new}"
        return None

    return rule


def _endpoint(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    field = path.rsplit(".", 1)[-1]
    return f"remote {field} changed: turns may go to another server"


def _heavy(path: str, old: JsonValue, new: JsonValue, b: Profile) -> str | None:
    if not b.remote.enabled:
        return None
    field = path.rsplit(".", 1)[-1]
    if field == "labels":
        added = sorted(set(_names(new)) - set(_names(old)))
        return f"more turns sent remote: labels {', '.join(added)}" if added else None
    if field == "long_answer_tokens":
        if isinstance(new, int | float) and (not isinstance(old, int | float) or new < old):
            return f"more turns sent remote: answers longer than {new} tokens"
        return None
    return f"more turns sent remote: {field} turned on" if new is True else None


_RULES: tuple[tuple[str, Rule], ...] = (
    ("tools.allow", _allow),
    ("repl.filesystem", _filesystem),
    ("repl.network", _turned_on("REPL network access")),
    ("repl.subprocess", _turned_on("REPL subprocesses")),
    ("repl.limits", _raised("REPL limit")),
    ("repl.isolation", _in_process),
    ("remote.enabled", _turned_on("remote serving")),
    ("remote.endpoint", _endpoint),
    ("remote.endpoint_env", _endpoint),
    ("remote.heavy", _heavy),
    ("experience.opt_in", _turned_on("experience logging")),
    ("experience.retention_days", _raised("experience retention (days)")),
)


def _names(value: JsonValue) -> list[str]:
    """The entries of a list-of-names field (absent: none)."""
    return [str(v) for v in value] if isinstance(value, list) else []


def _show(value: JsonValue) -> str:
    if value is None:
        return "(absent)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
