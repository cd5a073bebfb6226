"""Each specialist's view of the conversation.

Owns the rule of the protocol: the answering adapter sees its system prompt, its own past turns
verbatim, and other adapters' turns only as their summaries, in conversation order. When the
view would not fit the context (with the answer reserve), the profile's ``[memory] compaction``
decides: ``summarize-oldest`` first replaces the oldest own turns by their summaries (never the
last ``keep_recent_turns``), then folds the oldest notes into rolling digests (one note per
block of ``BLOCK`` turns, a line per turn: its label and the first sentence of its summary;
never the conversation's last ``keep_recent_turns`` turns), then leaves out the oldest turns,
digests first; ``drop-oldest`` only leaves out the oldest turns. Blocks are counted from the
conversation's start and a digest is built from stored summaries alone, so a digest, like a
note, reads the same at every turn: the view's start stays byte-identical from turn to turn
(its KV prefix keeps being reused) until the next block is folded or left out, and a session of
any length keeps answering. A note says how many earlier turns are not shown, and the view
counts them. Nothing is cut silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from macaron_local.errors import ContextOverflowError
from macaron_local.hcp import Profile
from macaron_local.store import TurnRecord

BLOCK = 8  # turns folded into one digest note
DROP_BLOCK = 4 * BLOCK  # turns left out at a time: rarely, since each one moves the view's start
DIGEST_CHARS = 160  # a digest line keeps its summary's first sentence, cut to this
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class View:
    label: str
    messages: list[dict[str, str]]
    own_turns: tuple[str, ...]  # turn ids kept verbatim
    summarized: tuple[str, ...]  # turn ids shown as summaries (others' turns + compacted own)
    compacted: int  # own turns replaced by their summary to fit the context
    dropped: int = 0  # earliest turns of the conversation left out to fit the context
    folded: int = 0  # earliest turns whose notes were folded into digests (dropped ones too)
    tokens: tuple[int, ...] = ()  # the rendered prompt, tokenized once while fitting it


def summary_note(profile: Profile, turn: TurnRecord, summary: str) -> dict[str, str]:
    name = profile.display_name(turn.label)
    return {"role": "system", "content": f"[Earlier turn handled by {turn.label} {name}] {summary}"}


def digest_note(
    profile: Profile, first: int, lines: Sequence[tuple[TurnRecord, str]]
) -> dict[str, str]:
    """One note for the turns ``first``.. (1-based positions): a line per (turn, summary)."""
    body = "\n".join(
        f"- {t.label} {profile.display_name(t.label)}: {_gist(text)}" for t, text in lines
    )
    last = first + BLOCK - 1
    return {"role": "system", "content": f"[Earlier turns {first}-{last}, in short]\n{body}"}


def _gist(summary: str) -> str:
    """A summary's first sentence, at most ``DIGEST_CHARS`` characters (marked when cut)."""
    text = " ".join(summary.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= DIGEST_CHARS else first[: DIGEST_CHARS - 1].rstrip() + "…"


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
    # the conversation's last keep_recent_turns turns are never folded, and left out last
    recent = max(0, len(history) - profile.memory.keep_recent_turns)
    foldable = recent // BLOCK if summarize else 0  # whole blocks before them
    n_tokens = 0

    def attempt(compact: int, folded: int, dropped: int) -> View | None:
        nonlocal n_tokens
        verbatim = {t.id for t in own[compact:]}
        msgs, shown = _messages(
            profile, label, system, history, (dropped, folded * BLOCK), verbatim, summary_of
        )
        if dropped:
            msgs.insert(1, _left_out(dropped))
        msgs += [{"role": "user", "content": request}, *tool_messages]
        tokens = chat_tokens(msgs)
        n_tokens = len(tokens)
        if n_tokens > budget:
            return None
        rest = {r.id for r in history[dropped:]}
        kept = tuple(t.id for t in own[compact:] if t.id in rest)
        return View(
            label, msgs, kept, tuple(shown), compact, dropped, folded * BLOCK, tuple(tokens)
        )

    # every search is binary: fewer verbatim turns, more folded notes or fewer turns shown
    # never make the view longer
    most = len(own) - keep if summarize else 0
    view = attempt(0, 0, 0)
    if view is None and most and (view := attempt(most, 0, 0)) is not None:
        view = _smallest(1, most - 1, lambda compact: attempt(compact, 0, 0)) or view
    if view is None and foldable:  # every whole block before the recent turns, as digests:
        view = attempt(most, foldable, 0)  # what follows the digests, re-read when the next
    if view is not None:  # block is folded, stays a few turns long
        return view
    # then the oldest turns left out, digests first
    blocks = -(-recent // DROP_BLOCK)
    view = _smallest(1, blocks, lambda b: attempt(most, foldable, min(recent, b * DROP_BLOCK)))
    if view is None and recent < len(history):
        view = attempt(most, foldable, len(history))
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
    span: tuple[int, int],
    verbatim: set[str],
    summary_of: Callable[[TurnRecord], str],
) -> tuple[list[dict[str, str]], list[str]]:
    """The messages for ``history[start:]`` where ``span = (start, folded)``: turns before
    ``folded`` come a block at a time, their notes as one digest (verbatim turns after it)."""
    start, folded = span
    msgs, shown = [system], []
    for i in range(start, folded, BLOCK):  # start and folded are whole blocks
        block = history[i : i + BLOCK]
        lines = [(t, summary_of(t)) for t in block if _noted(profile, label, t, verbatim)]
        if lines:
            msgs.append(digest_note(profile, i + 1, lines))
            shown += [t.id for t, _ in lines]
        msgs += [m for t in block if t.id in verbatim for m in _verbatim(t)]
    for turn in history[max(start, folded) :]:
        if turn.id in verbatim:
            msgs += _verbatim(turn)
        elif _noted(profile, label, turn, verbatim):
            msgs.append(summary_note(profile, turn, summary_of(turn)))
            shown.append(turn.id)
    return msgs, shown


def _noted(profile: Profile, label: str, turn: TurnRecord, verbatim: set[str]) -> bool:
    """Whether a turn not shown verbatim is shown by its summary (own, or others' if allowed)."""
    if turn.id in verbatim:
        return False
    return turn.label == label or profile.memory.other_turns == "summary"


def _verbatim(turn: TurnRecord) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": turn.request},
        {"role": "assistant", "content": turn.answer},
    ]
