"""Redaction: what must never reach the experience log, removed before anything is stored.

Owns the patterns for secrets (API keys: ``sk-...``, ``ghp_...``/``github_pat_...``,
``AKIA...``, ``xoxb-...``; bearer tokens; JWTs; private key blocks; ``password: x`` style
assignments) and for text the user marked NoAI (``[NoAI]...[/NoAI]``, ``<noai>...</noai>``, a
line that starts with ``NoAI:``, and GenUI values whose visibility is ``NoAI``). Every hit is
replaced by ``[REDACTED:<kind>]``. Must not: log, store or return what it removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# Order matters: blocks first (a NoAI block may contain a key), then specific key shapes, then
# the generic "name: value" assignments.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("noai", re.compile(r"\[noai\].*?(?:\[/noai\]|\Z)", re.I | re.S)),
    ("noai", re.compile(r"<noai>.*?(?:</noai>|\Z)", re.I | re.S)),
    ("noai", re.compile(r"^[ \t]*noai:.*$", re.I | re.M)),
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}")),
    ("bearer", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}")),
    ("api_key", re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}")),
    ("api_key", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("api_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("api_key", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    (
        "password",
        re.compile(
            r"(?i)(?<![a-z])(pass(?:word|wd|phrase)?|pwd|secret|api[_ -]?key|access[_ -]?key|token|"
            r"client[_ -]?secret)(\s*(?:[:=]|\bis\b)\s*)(\"[^\"]*\"|'[^']*'|\S+)"
        ),
    ),
)


def redact(text: str) -> tuple[str, int]:
    """``text`` with every secret and NoAI part replaced; and how many parts were replaced."""
    hits = 0
    for kind, pattern in _PATTERNS:
        if kind == "password":
            text, n = pattern.subn(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED:password]", text)
        else:
            text, n = pattern.subn(f"[REDACTED:{kind}]", text)
        hits += n
    return text, hits


def redact_value(value: Any) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value; a mapping whose ``visibility`` is NoAI
    (a GenUI field the model never sees) is dropped whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        if str(value.get("visibility", "")).lower() == "noai":
            return "[REDACTED:noai]", 1
        out, hits = {}, 0
        for k, v in value.items():
            out[k], n = redact_value(v)
            hits += n
        return out, hits
    if isinstance(value, list | tuple):
        items = [redact_value(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0
