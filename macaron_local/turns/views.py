"""Each specialist's view of the conversation.

Owns the rule of the protocol: the answering adapter sees its system prompt, its own past turns
verbatim, and other adapters' turns only as their summaries, in conversation order. When the
view would not fit the context (with the answer reserve), the oldest own turns are replaced by
their summaries, never silently cut; the view says how many were compacted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from macaron_local.errors import ContextOverflowError
from macaron_local.hcp import Profile
from macaron_local.store import TurnRecord

LABEL_NAMES = {"L0": "Chat", "L1": "Agent", "L2": "Coding", "L3": "GenUI"}


@dataclass(frozen=True)
class View:
    label: str
    messages: list[dict[str, str]]
    own_turns: tuple[str, ...]  # turn ids kept verbatim
    summarized: tuple[str, ...]  # turn ids shown as summaries (others' turns + compacted own)
    compacted: int  # own turns replaced by their summary to fit the context


def summary_note(turn: TurnRecord, summary: str) -> dict[str, str]:
    name = LABEL_NAMES.get(turn.label, turn.label)
    return {"role": "system", "content": f"[Earlier turn handled by {turn.label} {name}] {summary}"}


def build_view(
    profile: Profile,
    label: str,
    history: Sequence[TurnRecord],
    request: str,
    *,
    summary_of: Callable[[TurnRecord], str],
    count_tokens: Callable[[str], int],
    render: Callable[[list[dict[str, str]]], str],
    n_ctx: int,
    tools: Mapping[str, str] | None = None,
    tool_messages: Sequence[dict[str, str]] = (),
) -> View:
    """The view for ``label`` answering ``request`` after ``history`` (root first).

    ``summary_of`` returns a turn's summary (waiting for or producing it if needed); it is only
    called for turns the view shows as summaries.
    """
    system = {"role": "system", "content": profile.system_prompt(label, tools)}
    own = [t for t in history if t.label == label and profile.memory.own_turns == "verbatim"]
    budget = n_ctx - profile.memory.answer_reserve
    for compact in range(len(own) + 1):  # oldest own turns first
        verbatim = {t.id for t in own[compact:]}
        msgs, shown = _messages(profile, label, system, history, verbatim, summary_of)
        msgs += [{"role": "user", "content": request}, *tool_messages]
        n_tokens = count_tokens(render(msgs))
        if n_tokens <= budget:
            return View(label, msgs, tuple(t.id for t in own[compact:]), tuple(shown), compact)
    raise ContextOverflowError(
        f"the {label} view needs {n_tokens} tokens but the context leaves {budget} after the "
        "answer reserve, even with every earlier turn summarized",
        n_tokens=n_tokens,
        limit=budget,
        hint="shorten the message, start a new session, or use a profile with a larger n_ctx "
        "(or a remote)",
    )


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
            msgs.append(summary_note(turn, summary_of(turn)))
            shown.append(turn.id)
    return msgs, shown
