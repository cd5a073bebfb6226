"""Views of long conversations fit the context forever, under both compaction policies, and
keep their start from turn to turn (rolling digests before leaving turns out).

The real engine's chat template and tokenizer count every view; the history is a synthetic
1,000-turn conversation (generating that many turns would take hours on two cores;
``test_long_session.py`` runs hundreds of real turns under short budgets).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from macaron_local.hcp import load_profile
from macaron_local.store import TurnRecord
from macaron_local.turns.views import BLOCK, DROP_BLOCK, View, build_view

LABELS = ("L0", "L1", "L2", "L3")


def _history(n: int) -> list[TurnRecord]:
    now = datetime.now(UTC)
    return [
        TurnRecord(
            id=f"t{i:04d}",
            session_id="s",
            parent_id=f"t{i - 1:04d}" if i else None,
            created_at=now,
            request=f"Request {i}: please help me with item number {i} of my long list of chores.",
            answer=f"Answer {i}: here is what to do about item {i}, step by step, in short form.",
            label=LABELS[(i * 7) % 4],
            route_kind="auto",
            adapter_revision="base",
            profile_hash="f" * 64,
        )
        for i in range(n)
    ]


def _summary(turn: TurnRecord) -> str:
    return f"The user asked about item {turn.id[1:]}; the {turn.label} specialist answered."


def _long_summary(turn: TurnRecord) -> str:
    """Three sentences, as the profile's summary prompt asks for (~60 tokens)."""
    i = int(turn.id[1:])
    return (
        f"The user asked the {turn.label} specialist for help with item {i} of a long list. "
        f"The specialist answered with a short plan for item {i}, naming the tools to use. "
        f"Worth remembering: item {i} is due on day {i % 28 + 1} and costs {i * 3} euros."
    )


@pytest.fixture(scope="module")
def engine(model_path: Any) -> Any:
    from macaron_local.engine.engine import Engine, EngineConfig

    with Engine(model_path, EngineConfig(n_ctx=512)) as engine:
        yield engine


def _view(
    engine: Any, profile: Any, label: str, history: list[TurnRecord], summary: Any = _summary
) -> View:
    return build_view(
        profile,
        label,
        history,
        "and the next one?",
        summary_of=summary,
        chat_tokens=engine.chat_tokens,
        n_ctx=4096,
    )


@pytest.mark.parametrize("policy", ["summarize-oldest", "drop-oldest"])
def test_a_thousand_turn_session_keeps_fitting(engine: Any, policy: str) -> None:
    base = load_profile("tall-local")
    memory = base.memory.model_copy(update={"compaction": policy})
    profile = base.model_copy(update={"memory": memory})
    history = _history(1000)
    budget = 4096 - profile.memory.answer_reserve
    for n in (10, 60, 300, 1000):
        for label in LABELS:
            view = _view(engine, profile, label, history[:n])
            assert engine.count_tokens(engine.render_chat(view.messages)) <= budget
            assert view.messages[-1] == {"role": "user", "content": "and the next one?"}
            text = " ".join(m["content"] for m in view.messages)
            assert f"Request {n - 1}:" in text or _summary(history[n - 1]) in text  # the latest
            if n == 1000:  # long: the earliest turns are left out, and the view says so
                assert view.dropped > 0 and view.dropped % DROP_BLOCK == 0
                assert f"{view.dropped} earlier turns" in view.messages[1]["content"]
                assert "Request 0:" not in text


def test_the_newest_own_turns_stay_verbatim(engine: Any) -> None:
    profile = load_profile("tall-local")  # summarize-oldest, keep_recent_turns = 2
    history = _history(1000)
    view = _view(engine, profile, "L1", history)
    own = [t for t in history if t.label == "L1"]
    keep = profile.memory.keep_recent_turns
    assert [t.id for t in own[-keep:]] == list(view.own_turns)
    assert view.compacted == len(own) - keep


def test_the_start_of_a_long_view_stays_put_from_turn_to_turn(engine: Any) -> None:
    """Turns are left out a block at a time, so most turns reuse the previous view's prefix."""
    profile = load_profile("tall-local")
    history = _history(700)
    views = [_view(engine, profile, "L0", history[:n]) for n in range(600, 620)]
    same = sum(a.messages[:3] == b.messages[:3] for a, b in zip(views, views[1:], strict=False))
    assert same >= 0.7 * (len(views) - 1), same


def _prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_rolling_digests_come_before_leaving_turns_out_and_keep_the_prefix(engine: Any) -> None:
    """One label's views at its own turns 100-300 (the slot its KV prefix lives in): notes are
    folded into digests before any turn is left out, a digest's lines never change (it only
    gains the label's own turns once they are summarized), and most of each view is the
    previous one's start (the old views, which left turns out 8 at a time and never folded,
    reused a median of 5% of it and showed 34 earlier turns, not 60 and more)."""
    profile = load_profile("tall-local")
    history = _history(300)
    views = [
        (n, _view(engine, profile, "L0", history[:n], _long_summary))
        for n in range(100, 300)
        if history[n].label == "L0"
    ]
    digests: dict[str, set[str]] = {}
    for n, view in views:
        assert view.folded > 0 and view.folded % BLOCK == 0 and view.dropped % DROP_BLOCK == 0
        notes = [m["content"] for m in view.messages if m["content"].startswith("[Earlier turns ")]
        assert notes and all(1 < len(d.splitlines()) <= BLOCK + 1 for d in notes)
        for d in notes:
            head, *lines = d.splitlines()
            assert digests.setdefault(head, set()) <= set(lines), (n, head)
            digests[head] = set(lines)
        recent = n - profile.memory.keep_recent_turns  # the latest turns: never folded or left out
        assert view.folded <= recent and view.dropped <= recent
    assert views[0][1].dropped < views[-1][1].dropped  # left out in the end, digests first
    pairs = zip(views, views[1:], strict=False)
    reused = sorted(_prefix(a.tokens, b.tokens) / len(b.tokens) for (_, a), (_, b) in pairs)
    assert reused[len(reused) // 2] >= 0.6, reused
    shown = sorted(n - v.dropped for n, v in views)
    assert shown[len(shown) // 2] >= 60, shown


def test_drop_oldest_never_folds(engine: Any) -> None:
    base = load_profile("tall-local")
    memory = base.memory.model_copy(update={"compaction": "drop-oldest"})
    profile = base.model_copy(update={"memory": memory})
    view = _view(engine, profile, "L0", _history(300), _long_summary)
    assert view.folded == 0 and view.dropped > 0
    assert not any(m["content"].startswith("[Earlier turns ") for m in view.messages)
