"""Each specialist's view of the conversation.

Owns the rule of the protocol: the answering adapter sees its system prompt, its own past turns
verbatim, and other adapters' turns only as their summaries, in conversation order. When the
view would not fit the context (with the answer reserve), the profile's ``[memory] compaction``
decides: ``summarize-oldest`` first replaces the oldest own turns by their summaries (never the
last ``keep_recent_turns``), then leaves out the oldest turns; ``drop-oldest`` only leaves out
the oldest turns. Turns are left out in blocks of ``DROP_BLOCK`` in conversation order, so the
start of the view stays the same for several turns (its KV prefix keeps being reused) and a
session of any length keeps answering; a note says how many earlier turns are not shown, and
the view counts them. Nothing is cut silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from macaron_local.errors import ContextOverflowError
from macaron_local.hcp import Profile
from macaron_local.store import TurnRecord

DROP_BLOCK = 8  # earlier turns are left out this many at a time (a stable view prefix)


@dataclass(frozen=True)
class View:
    label: str
    messages: list[dict[str, str]]
    own_turns: tuple[str, ...]  # turn ids kept verbatim
    summarized: tuple[str, ...]  # turn ids shown as summaries (others' turns + compacted own)
    compacted: int  # own turns replaced by their summary to fit the context
    dropped: int = 0  # earliest turns of the conversation left out to fit the context
    tokens: tuple[int, ...] = ()  # the rendered prompt, tokenized once while fitting it


def summary_note(profile: Profile, turn: TurnRecord, summary: str) -> dict[str, str]:
    name = profile.display_name(turn.label)
    return {"role": "system", "content": f"[Earlier turn handled by {turn.label} {name}] {summary}"}


def build_view(
    profile: Profile,
    label: str,
    history: Sequence[TurnRecord],
    request: str,
    *,
    summary_of: Callable[[TurnRecord], str],
    chat_tokens: Callable[[list[dict[str, str]]], list[int]],
    n_ctx: int,
    tools: Mapping[str, str] | None = None,
    tool_messages: Sequence[dict[str, str]] = (),
) -> View:
    """The view for ``label`` answering ``request`` after ``history`` (root first).

    ``summary_of`` returns a turn's summary (waiting for or producing it if needed); it is only
    called for turns the view shows as summaries. ``chat_tokens`` renders and tokenizes a chat
    (``Engine.chat_tokens``); the view keeps the tokens of the one that fits.
    """
    system = {"role": "system", "content": profile.system_prompt(label, tools)}
    own = [t for t in history if t.label == label and profile.memory.own_turns == "verbatim"]
    budget = n_ctx - profile.memory.answer_reserve
    keep = min(len(own), profile.memory.keep_recent_turns)
    summarize = profile.memory.compaction == "summarize-oldest"
    n_tokens = 0

    def attempt(compact: int, dropped: int) -> View | None:
        nonlocal n_tokens
        rest = history[dropped:]
        verbatim = {t.id for t in own[compact:]}
        msgs, shown = _messages(profile, label, system, rest, verbatim, summary_of)
        if dropped:
            msgs.insert(1, _left_out(dropped))
        msgs += [{"role": "user", "content": request}, *tool_messages]
        tokens = chat_tokens(msgs)
        n_tokens = len(tokens)
        if n_tokens > budget:
            return None
        kept = tuple(t.id for t in own[compact:] if t.id in {r.id for r in rest})
        return View(label, msgs, kept, tuple(shown), compact, dropped, tuple(tokens))

    # both searches are binary: fewer verbatim turns or fewer turns shown never make it longer
    most = len(own) - keep if summarize else 0
    view = attempt(0, 0)
    if view is None and most and (view := attempt(most, 0)) is not None:
        view = _smallest(1, most - 1, lambda compact: attempt(compact, 0)) or view
    if view is not None:  # it fits, with the oldest own turns summarized if need be
        return view
    blocks = -(-len(history) // DROP_BLOCK)
    view = _smallest(1, blocks, lambda b: attempt(most, min(len(history), b * DROP_BLOCK)))
    if view is not None:
        return view
    raise ContextOverflowError(
        f"the {label} view needs {n_tokens} tokens but the context leaves {budget} after the "
        "answer reserve, even with no earlier turn shown",
        n_tokens=n_tokens,
        limit=budget,
        hint="shorten the message, or use a profile with a larger n_ctx (or a remote)",
    )


def _smallest(lo: int, hi: int, make: Callable[[int], View | None]) -> View | None:
    """``make(n)`` for the smallest ``n`` in ``lo..hi`` that gives a view (None if none does)."""
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        view = make(mid)
        if view is None:
            lo = mid + 1
        else:
            best, hi = view, mid - 1
    return best


def _left_out(n: int) -> dict[str, str]:
    return {
        "role": "system",
        "content": f"[{n} earlier turns of this conversation are not shown: it has grown long]",
    }


def _messages(
    profile: Profile,
    label: str,
    system: dict[str, str],
    history: Sequence[TurnRecord],
    verbatim: set[str],
    summary_of: Callable[[TurnRecord], str],
) -> tuple[list[dict[str, str]], list[str]]:
    msgs, shown = [system], []
    for turn in history:
        if turn.id in verbatim:
            msgs += [
                {"role": "user", "content": turn.request},
                {"role": "assistant", "content": turn.answer},
            ]
        elif turn.label == label or profile.memory.other_turns == "summary":
            msgs.append(summary_note(profile, turn, summary_of(turn)))
            shown.append(turn.id)
    return msgs, shown
