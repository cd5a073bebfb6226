"""Parsers for the hand-written seed files under models/data/src/.

Owns the two source formats described in docs/formats.md ("Training data sources"):
line files (one request per line) and record files (``@@`` records). It must not
augment, validate answers or write anything: that is build.py's and checks.py's job.
Stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

LABELS = ("L0", "L1", "L2", "L3")
_ESCAPE = re.compile(r"\\\\|\\n")


def unescape(line: str) -> str:
    """Turn the two escapes of a line file into text: ``\\n`` -> newline, ``\\\\`` -> ``\\``."""
    return _ESCAPE.sub(lambda m: "\n" if m.group(0) == "\\n" else "\\", line)


def read_lines(path: Path) -> list[str]:
    """Requests of a line file: blank lines and lines starting with ``# `` are skipped."""
    out: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("# ") or line == "#":
            continue
        out.append(unescape(line))
    return out


def read_labelled(path: Path) -> list[tuple[str, str]]:
    """Lines ``L1 | request`` of the hard-boundary file, as (label, request)."""
    out: list[tuple[str, str]] = []
    for line in read_lines(path):
        label, sep, text = line.partition(" | ")
        if not sep or label not in LABELS or not text.strip():
            raise ValueError(f"{path.name}: bad labelled line: {line[:60]!r}")
        out.append((label, text.strip()))
    return out


def read_followups(path: Path) -> list[tuple[str, str, str, str]]:
    """Lines ``L2 | L2: previous digest || follow-up`` as (label, previous label, digest,
    request): a follow-up, the label it goes to, and the turn before it."""
    out: list[tuple[str, str, str, str]] = []
    for label, rest in read_labelled(path):
        prev, sep, request = rest.partition(" || ")
        prev_label, colon, digest = prev.partition(": ")
        if not sep or not colon or prev_label not in LABELS or not digest or not request.strip():
            raise ValueError(f"{path.name}: bad follow-up line: {rest[:60]!r}")
        out.append((label, prev_label, digest.strip(), request.strip()))
    return out


@dataclass
class Record:
    """One ``@@`` record: a request, the answer body, optional summary and checks."""

    source: str
    line: int
    request: str
    body: list[str] = field(default_factory=list)
    summary: str | None = None
    checks: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return "\n".join(self.body).strip("\n")

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def read_records(path: Path) -> list[Record]:
    """Records of a record file; text before the first ``@@`` line is a comment."""
    records: list[Record] = []
    current: Record | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if raw.startswith("@@ "):
            current = Record(path.name, number, unescape(raw[3:].strip()))
            records.append(current)
        elif current is None:
            continue
        elif raw.startswith("%% "):
            current.summary = raw[3:].strip()
        elif raw.startswith("!! ") or raw == "!!":
            current.checks.append(raw[3:])
        else:
            current.body.append(raw.rstrip())
    return records
