"""The summary hop: the adapter that answered writes a short note of the turn.

The summary sees exactly what training shows it: the answering label's system prompt, this
turn's request and answer, and the profile's summary request. Not the rest of the view: given
other turns' notes, the small model copied them into this one. It runs in a KV slot of its own
per label (the system prompt is reused; the answer's slot stays intact for the next turn), after
the answer is delivered, at the priority its caller gives: a committed turn's at ``SUMMARY``
(before the next answer; a route preempts it between tokens), a catch-up one at background
priority (any request preempts it between prompt chunks and between tokens).

A summary is prose for the other specialists, never code: :func:`checked_summary` replaces a
summary with a code fence or code-like lines (what the agent's adapter tends to write: its REPL
block again) by one built from the record (the request, the tools that ran and how each ended,
the answer's opening).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

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


CODE_LINE = re.compile(
    r"^\s*(```|>>>|\[tool\]|=> |(import|from)\s+\w+|(for|while|if|elif|def|class|with|try)\b.*:$|"
    r"(print|return)\b|[A-Za-z_][\w.\[\]\"']*\s*[-+*/]?=\s*\S|[\w.]+\(.*\)\s*$)"
)


def looks_like_code(text: str) -> bool:
    """A code fence, or a line that reads as a statement rather than a sentence."""
    return "```" in text or any(CODE_LINE.match(line) for line in text.splitlines())


def checked_summary(text: str, turn: TurnRecord, modules: Collection[str] = ()) -> str:
    """``text`` when it is prose, else :func:`record_summary` (``modules``: the tool modules,
    to name the tools a REPL block called)."""
    return record_summary(turn, modules) if looks_like_code(text) else text


def record_summary(turn: TurnRecord, modules: Collection[str] = ()) -> str:
    """What happened, from the record: the request, each tool step and how it ended, the answer."""
    out = f"The user asked: {_clip(turn.request, 160)}"
    calls = turn.tool_calls
    if not calls:
        out += " No tool ran."
    else:
        steps = "; ".join(_step(c.code, c.status, c.result, modules) for c in calls)
        out += f" The assistant ran {len(calls)} tool step{'s' if len(calls) > 1 else ''}: {steps}."
        if not any(c.status == "ok" for c in calls):
            out += " Nothing was done."
    return f"{out} It answered: {_clip(turn.answer, 200)}"


def _step(code: str, status: str, result: str, modules: Collection[str]) -> str:
    names = _tool_names(code, modules)
    what = ", ".join(names) if names else "a Python block"
    if status == "ok":
        return f"{what} (ok)"
    last = next((ln.strip() for ln in reversed(result.splitlines()) if ln.strip()), status)
    return f"{what} ({status}: {_clip(last, 100)})"


def _tool_names(code: str, modules: Collection[str]) -> list[str]:
    try:  # a discrete call block
        return [str(json.loads(code)["tool"])]
    except (ValueError, KeyError, TypeError):
        pass
    found = re.findall(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*\(", code)
    names = [f"{m}.{f}" for m, f in found if not modules or m in modules]
    return list(dict.fromkeys(names))
