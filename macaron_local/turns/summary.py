"""The summary hop: the adapter that answered writes a short note of the turn.

The summary continues the answering adapter's own view (its KV slot already holds the view and
the answer, so only the summary request is evaluated) and runs at background priority after the
answer is delivered; an interactive request preempts it between tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from macaron_local.engine import BACKGROUND, Engine, Sampling, Stream
from macaron_local.hcp import Profile


def summary_messages(
    profile: Profile, view: Sequence[dict[str, str]], answer: str
) -> list[dict[str, str]]:
    """The view, the answer, then the profile's summary request (training uses the same shape)."""
    return [
        *view,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": profile.summary.prompt.strip()},
    ]


def start_summary(
    engine: Engine,
    profile: Profile,
    *,
    adapter: str | None,
    slot: str,
    view: Sequence[dict[str, str]],
    answer: str,
    priority: int = BACKGROUND,
) -> Stream:
    prompt = engine.render_chat(summary_messages(profile, view, answer))
    budget = profile.summary.max_tokens
    tokens = engine.tokenize(prompt)
    if len(tokens) + budget > engine.n_ctx:  # keep the request and the answer; drop the history
        prompt = engine.render_chat(summary_messages(profile, [view[0], view[-1]], answer))
    return engine.generate(
        prompt,
        adapter=adapter,
        slot=slot,
        max_tokens=budget,
        sampling=Sampling(temperature=0.0, repeat_penalty=1.1),
        priority=priority,
    )
