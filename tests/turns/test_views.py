"""Views of long conversations fit the context forever, under both compaction policies.

The real engine's chat template and tokenizer count every view; the history is a synthetic
1,000-turn conversation (generating that many turns would take hours on two cores).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from macaron_local.hcp import load_profile
from macaron_local.store import TurnRecord
from macaron_local.turns.views import DROP_BLOCK, View, build_view

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


@pytest.fixture(scope="module")
def engine(model_path: Any) -> Any:
    from macaron_local.engine.engine import Engine, EngineConfig

    with Engine(model_path, EngineConfig(n_ctx=512)) as engine:
        yield engine


def _view(engine: Any, profile: Any, label: str, history: list[TurnRecord]) -> View:
    return build_view(
        profile,
        label,
        history,
        "and the next one?",
        summary_of=_summary,
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
