"""The summary hop: the adapter that answered writes a short note of the turn.

The summary sees exactly what training shows it: the answering label's system prompt, this
turn's request and answer, and the profile's summary request. Not the rest of the view: given
other turns' notes, the small model copied them into this one. It runs in a KV slot of its own
per label (the system prompt is reused; the answer's slot stays intact for the next turn) at
background priority after the answer is delivered; an interactive request preempts it between
prompt chunks and between tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from macaron_local.engine import BACKGROUND, Completion, Engine, Sampling, Stream
from macaron_local.hcp import Profile
from macaron_local.store import TurnRecord
from macaron_local.turns.route import clip_middle


def summary_messages(
    profile: Profile, view: Sequence[dict[str, str]], answer: str
) -> list[dict[str, str]]:
    """The view's system prompt and this turn's request (its first and last messages), the
    answer, then the profile's summary request; training builds the same shape."""
    head = [view[0], view[-1]] if len(view) > 1 else list(view)
    return [
        *head,
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
) -> Stream[Completion]:
    budget = profile.summary.max_tokens
    prompt = engine.render_chat(summary_messages(profile, view, answer))
    if engine.count_tokens(prompt) + budget > engine.n_ctx:  # a huge paste: its ends are enough
        request = {**view[-1], "content": clip_middle(engine, view[-1]["content"])}
        answer = clip_middle(engine, answer)
        prompt = engine.render_chat(summary_messages(profile, [view[0], request], answer))
    return engine.generate(
        prompt,
        adapter=adapter,
        slot=slot,
        max_tokens=budget,
        sampling=Sampling(temperature=0.0, repeat_penalty=1.1),
        priority=priority,
    )


PROVISIONAL_CHARS = 240


def provisional_summary(turn: TurnRecord) -> str:
    """A stand-in for a summary still being written: the request and the answer's opening
    sentences, clipped. A view uses it only when the profile's ``summary_wait_s`` ran out."""
    return (
        f"(provisional) The user asked: {_clip(turn.request)} "
        f"The answer began: {_clip(turn.answer)}"
    )


def _clip(text: str, limit: int = PROVISIONAL_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", cut)]
    return cut[: ends[-1]] if ends and ends[-1] > limit // 3 else cut.rsplit(" ", 1)[0] + " ..."
