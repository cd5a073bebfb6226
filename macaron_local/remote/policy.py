"""The heavy-turn policy: which turns go to the remote, from the profile's ``[remote.heavy]``.

Owns the rules and their order: the user's explicit ``/remote`` first, then a label whose local
adapter is missing, a heavy label, a view longer than the local context, and an expected long
answer (the request names a size: "800 words", "3 pages", "a 200-line script"...).
Must not: make network calls, read the environment, or look at the remote's health (a heavy turn
whose remote is down still counts as heavy; the hook decides what runs it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from macaron_local.hcp.schema import HeavyRules

# Rough tokens per unit of a requested size (English prose/code through a BPE tokenizer).
_UNIT_TOKENS = {
    "token": 1.0,
    "word": 1.4,
    "line": 12.0,
    "sentence": 25.0,
    "paragraph": 120.0,
    "page": 600.0,
}
_SIZE = re.compile(
    r"\b(\d{1,6})(?:[\s-]*|\s+\w+\s+)(tokens?|words?|lines?|sentences?|paragraphs?|pages?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Heavy:
    """Why a turn is heavy: a stable ``code`` for the record and a sentence for the user."""

    code: str  # forced | local_missing | label | long_view | long_answer
    why: str


def expected_answer_tokens(text: str) -> int:
    """The largest answer size the request names, in tokens (0 when it names none)."""
    best = 0.0
    for match in _SIZE.finditer(text):
        unit = match.group(2).lower().rstrip("s")
        best = max(best, int(match.group(1)) * _UNIT_TOKENS[unit])
    return int(best)


def heavy_reason(
    rules: HeavyRules,
    *,
    label: str,
    text: str,
    forced: bool = False,
    local_missing: bool = False,
    view_too_long: bool = False,
) -> Heavy | None:
    """The first rule that makes this turn heavy, or None (the turn is local)."""
    if forced:
        return Heavy("forced", "you asked for the remote")
    if local_missing and rules.local_model_missing:
        return Heavy("local_missing", f"no local adapter for {label}")
    if label in rules.labels:
        return Heavy("label", f"{label} turns go to the remote")
    if view_too_long and rules.view_exceeds_local_ctx:
        return Heavy("long_view", "the conversation is longer than the local context")
    if rules.long_answer_tokens is not None:
        expected = expected_answer_tokens(text)
        if expected >= rules.long_answer_tokens:
            return Heavy("long_answer", f"the answer asked for is about {expected} tokens")
    return None


def split_remote_command(text: str) -> tuple[str, bool]:
    """``"/remote write a parser"`` -> ``("write a parser", True)``; other text is unchanged."""
    head, _, rest = text.lstrip().partition(" ")
    if head == "/remote" and rest.strip():
        return rest.strip(), True
    return text, False
