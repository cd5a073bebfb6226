"""The route hop: L0 picks exactly one label under a validated grammar.

Owns the routing prompt (the profile's router prompt + the request, clipped in the middle when
very long, after one line naming the previous turn's label and digest when there is one, so a
follow-up is routed with its conversation), label probabilities read from the logits at the
step where the labels diverge, and the fallback: any failure returns the profile's fallback
label with the error recorded, so a turn never fails because routing did.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from macaron_local.engine import ROUTE, Engine, Sampling
from macaron_local.engine.tokenizer import Vocab
from macaron_local.hcp import Profile

ROUTE_SLOT = "route"
# A long paste is routed on its start and its end (where the ask usually is): routing cost
# stays bounded, and training clips the same way.
HEAD_TOKENS, TAIL_TOKENS = 96, 96
# The previous turn's digest (its request or summary) is cut to this many characters, on one
# line: enough to say what the conversation is about, cheap to prefill.
PREVIOUS_CHARS = 160

# (label, digest) of the previous turn of the conversation
Previous = tuple[str, str]


@dataclass(frozen=True)
class RouteResult:
    label: str
    kind: str  # "auto" | "fallback" | "manual" | "sticky"
    probs: dict[str, float] = field(default_factory=dict)
    ms: float = 0.0
    n_tokens: int = 0
    error: str | None = None


def route_messages(
    profile: Profile,
    request: str,
    tools: Mapping[str, str],
    previous: Previous | None = None,
) -> list[dict[str, str]]:
    """Exactly what the router sees (the refine pipeline trains L0 on the same messages).

    The system prompt is fixed (prefilled once and cached); the previous turn, when given, is a
    line at the start of the user message, after that fixed part.
    """
    user = request if previous is None else f"{previous_line(previous)}\n{request}"
    return [
        {"role": "system", "content": profile.router_prompt(tools)},
        {"role": "user", "content": user},
    ]


def previous_line(previous: Previous) -> str:
    """``Previous turn: L2 — <digest>``, the digest on one line and cut to PREVIOUS_CHARS."""
    label, digest = previous
    digest = " ".join(digest.split())
    if len(digest) > PREVIOUS_CHARS:
        digest = digest[: PREVIOUS_CHARS - 1].rstrip() + "…"
    return f"Previous turn: {label} — {digest}"


def clip_middle(engine: Engine | Vocab, text: str) -> str:
    """Keep the start and the end of a very long request (the ask is usually at one end)."""
    tokens = engine.tokenize(text)
    if len(tokens) <= HEAD_TOKENS + TAIL_TOKENS:
        return text
    head = engine.detokenize(tokens[:HEAD_TOKENS])
    tail = engine.detokenize(tokens[-TAIL_TOKENS:])
    return f"{head}\n[…]\n{tail}"


def route(
    engine: Engine,
    profile: Profile,
    request: str,
    *,
    adapter: str | None,
    tools: Mapping[str, str],
    previous: Previous | None = None,
) -> RouteResult:
    """Decide the label for ``request``; never raises (falls back instead).

    ``previous``: the previous turn's (label, digest) — its request or summary — so that a
    follow-up ("now make it skip negatives") goes where the conversation is.
    """
    started = time.perf_counter()
    labels = profile.router.labels
    try:
        msgs = route_messages(profile, clip_middle(engine, request), tools, previous)
        done = engine.complete(
            engine.render_chat(msgs),
            adapter=adapter,
            slot=ROUTE_SLOT,
            grammar=profile.router.grammar,
            max_tokens=profile.router.decode_budget,
            sampling=Sampling(temperature=0.0),
            capture_logits=True,
            priority=ROUTE,  # ahead of answers: it runs between another turn's tokens
        )
        label = done.text.strip()
        if label not in labels:
            raise ValueError(f"the router produced {label!r}, not one of {', '.join(labels)}")
        probs = label_probs(engine, labels, done.tokens, done.step_logits)
        return RouteResult(label, "auto", probs, _ms(started), done.n_evaluated)
    except Exception as exc:  # noqa: BLE001 - a route failure must never fail the turn
        return RouteResult(
            profile.router.fallback,
            "fallback",
            {},
            _ms(started),
            error=f"{type(exc).__name__}: {exc}",
        )


def label_probs(
    engine: Engine, labels: Sequence[str], path: Sequence[int], step_logits: Sequence[np.ndarray]
) -> dict[str, float]:
    """P(label) from the logits at the first step where the label tokenizations diverge."""
    seqs = {lab: engine.tokenize(lab) for lab in labels}
    for step, logits in enumerate(step_logits):
        firsts = {
            lab: s[step]
            for lab, s in seqs.items()
            if len(s) > step and list(s[:step]) == list(path[:step])
        }
        if len(set(firsts.values())) > 1:
            vals = {lab: float(logits[t]) for lab, t in firsts.items()}
            top = max(vals.values())
            exp = {lab: math.exp(v - top) for lab, v in vals.items()}
            total = sum(exp.values())
            return {lab: round(exp.get(lab, 0.0) / total, 6) for lab in labels}
    return {lab: float(lab == engine.detokenize(path)) for lab in labels}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
