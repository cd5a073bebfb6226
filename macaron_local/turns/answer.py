"""The answer step: one adapter writes one answer from prompt tokens, streaming, cancellable.

Owns the one place a specialist's answer is generated: the pipeline's local answer, each step
of the agent loop and the server's stateless turn all call :func:`answer`. The prompt arrives
as tokens (the view tokenized it once, while fitting it); the answer's budget is what the
context leaves, capped by the label's ``max_tokens``; the caller's cancel event goes into the
engine, which stops at its next step. Also owns turning a profile's sampling fields (any may
be unset) into the engine's :class:`Sampling`. Must not: build views, route, or store.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence

from macaron_local.engine import Completion, Engine, Sampling
from macaron_local.errors import ContextOverflowError
from macaron_local.hcp.schema import SamplingParams

MIN_ROOM = 16  # an answer budget below this is no answer: a context error instead
# a reasoning base (Qwen3, DeepSeek-R1...) may think aloud even when told not to
THINKING = re.compile(r"<think>.*?(?:</think>|$)\s*", re.DOTALL)


def sampling(s: SamplingParams, seed: int | None = None) -> Sampling:
    """The engine's sampling from the profile's (unset fields keep the engine's defaults);
    ``seed`` (a retry's fresh one) wins over the profile's."""
    d = Sampling()
    return Sampling(
        temperature=d.temperature if s.temperature is None else s.temperature,
        top_k=d.top_k if s.top_k is None else s.top_k,
        top_p=d.top_p if s.top_p is None else s.top_p,
        min_p=d.min_p if s.min_p is None else s.min_p,
        repeat_penalty=d.repeat_penalty if s.repeat_penalty is None else s.repeat_penalty,
        seed=seed if seed is not None else d.seed if s.seed is None else s.seed,
    )


def room(engine: Engine, n_prompt: int, max_tokens: int | None) -> int:
    """The answer budget: the label's ``max_tokens`` (512 unset), capped by what the context
    leaves after the prompt. ContextOverflowError when that is no room for an answer."""
    left = engine.n_ctx - n_prompt
    if left < MIN_ROOM:
        raise ContextOverflowError(
            f"the prompt needs {n_prompt} tokens; the context holds {engine.n_ctx} with room "
            "for the answer",
            n_tokens=n_prompt,
            limit=engine.n_ctx,
            hint="shorten the input, or use a profile with a larger n_ctx",
        )
    return min(max_tokens or 512, left)


def answer(
    engine: Engine,
    tokens: Sequence[int],
    *,
    adapter: str | None,
    slot: str,
    max_tokens: int,
    sampling: Sampling,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    grammar: str | None = None,
    ban_first: Sequence[int] = (),
) -> Completion:
    """Generate one answer from ``tokens``; CancelledError when ``cancel`` was set."""
    stream = engine.generate(
        list(tokens),
        adapter=adapter,
        slot=slot,
        max_tokens=max_tokens,
        sampling=sampling,
        grammar=grammar,
        ban_first=ban_first,
        cancel=cancel,
    )
    for piece in stream:
        if on_text is not None:
            on_text(piece)
    done: Completion = stream.result()
    return done


def visible(text: str) -> str:
    """The answer as kept and shown: stripped, without a reasoning base's ``<think>`` blocks
    (an unclosed one runs to the end: the budget ran out while it was still thinking)."""
    return THINKING.sub("", text).strip()
