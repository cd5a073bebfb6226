"""The turn pipeline on the real engine and a real SQLite file."""

from __future__ import annotations

import threading

import pytest

from macaron_local.errors import TurnError
from macaron_local.store import branch, export_session, import_session, summaries
from macaron_local.turns.adapters import Binding
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnEvents, TurnRequest
from macaron_local.turns.views import summary_note
from tests.conftest import macaron_home


def test_auto_route_answers_and_records_everything(runtime: Runtime) -> None:
    s = runtime.new_session("t")
    pieces: list[str] = []
    routes = []
    result = runtime.run_turn(
        TurnRequest(s.id, "What is the capital of Italy?"),
        TurnEvents(on_text=pieces.append, on_route=routes.append),
    )
    assert result.route_kind in {"auto", "fallback"} and result.label in runtime.profile.labels
    assert routes[0].label == result.label
    if result.route_kind == "auto":
        assert abs(sum(result.route_probs.values()) - 1) < 1e-3
        assert max(result.route_probs, key=result.route_probs.get) == result.label
    assert "".join(pieces).strip() == result.answer and result.answer
    assert result.profile_hash == runtime.profile.content_hash
    assert {"route_ms", "ttft_ms", "answer_ms", "total_ms"} <= set(result.timings)
    assert result.tokens["completion"] > 0 and result.tokens["route"] > 0
    runtime.finish_pending()
    assert summaries(runtime.db(), [result.id])[result.id].text


def test_manual_pin_is_recorded(runtime: Runtime) -> None:
    s = runtime.new_session()
    result = runtime.run_turn(TurnRequest(s.id, "hello there", label="L2"))
    assert (result.label, result.route_kind, result.route_probs) == ("L2", "manual", {})


def test_tool_result_is_sticky(runtime: Runtime) -> None:
    s = runtime.new_session()
    call = runtime.run_turn(TurnRequest(s.id, "list my todos", label="L1"))
    result = runtime.run_turn(
        TurnRequest(s.id, "[tool result] 3 open todos", tool_result_of=call.id)
    )
    assert (result.label, result.route_kind) == ("L1", "sticky")
    assert branch(runtime.db(), s.id)[-1].tool_result_of == call.id


def test_route_failure_falls_back_and_the_turn_goes_on(runtime: Runtime) -> None:
    s = runtime.new_session()
    saved = runtime.profile
    # A decode budget of 1 token cannot finish any label ("L" + digit): a real route failure.
    runtime.profile = saved.model_copy(
        update={"router": saved.router.model_copy(update={"decode_budget": 1})}
    )
    try:
        result = runtime.run_turn(TurnRequest(s.id, "write me a poem about tea"))
    finally:
        runtime.profile = saved
    assert (result.label, result.route_kind) == (saved.router.fallback, "fallback")
    assert result.answer and "route_error" in result.meta
    assert branch(runtime.db(), s.id)[-1].route_kind == "fallback"


def test_answer_failure_rolls_back(runtime: Runtime) -> None:
    s = runtime.new_session()
    runtime.run_turn(TurnRequest(s.id, "first", label="L0"))
    before = branch(runtime.db(), s.id)
    saved = runtime.bindings["L2"]
    runtime.bindings["L2"] = Binding("L2", "not-loaded", "base")
    try:
        with pytest.raises(TurnError, match="not-loaded"):
            runtime.run_turn(TurnRequest(s.id, "fix my code", label="L2"))
    finally:
        runtime.bindings["L2"] = saved
    assert branch(runtime.db(), s.id) == before


def test_views_hold_own_turns_verbatim_and_others_as_summaries(runtime: Runtime) -> None:
    s = runtime.new_session()
    plan = ["L0", "L2", "L0", "L2", "L1", "L0"]
    for i, label in enumerate(plan):
        runtime.run_turn(TurnRequest(s.id, f"question number {i} for {label}", label=label))
    runtime.finish_pending()
    history = branch(runtime.db(), s.id)
    stored = summaries(runtime.db(), [t.id for t in history])
    assert len(history) == 6 and set(stored) == {t.id for t in history}
    for label in ("L0", "L1", "L2"):
        view = runtime._view(label, history, "next question")
        expected = [view.messages[0]]
        for t in history:
            if t.label == label:
                expected += [
                    {"role": "user", "content": t.request},
                    {"role": "assistant", "content": t.answer},
                ]
            else:
                expected.append(summary_note(runtime.profile, t, stored[t.id].text))
        expected.append({"role": "user", "content": "next question"})
        assert view.messages == expected
        assert view.compacted == 0
        assert set(view.own_turns) == {t.id for t in history if t.label == label}


def test_compaction_replaces_oldest_own_turns_with_summaries(runtime: Runtime) -> None:
    s = runtime.new_session()
    filler = "Here is some background about my garden. " * 40
    for i in range(3):
        runtime.run_turn(
            TurnRequest(s.id, f"{filler} Question {i}: what should I plant?", label="L0")
        )
    runtime.finish_pending()
    history = branch(runtime.db(), s.id)
    full = runtime._view("L0", history, "and now?")
    n_full = runtime.engine.count_tokens(runtime.engine.render_chat(full.messages))
    from macaron_local.turns.views import build_view

    small = build_view(
        runtime.profile,
        "L0",
        history,
        "and now?",
        summary_of=runtime.summary_for,
        chat_tokens=runtime.engine.chat_tokens,
        n_ctx=n_full - 50 + runtime.profile.memory.answer_reserve,
    )
    assert small.compacted >= 1
    assert small.summarized[0] == history[0].id  # the oldest goes first
    assert history[-1].id in small.own_turns  # the newest stays verbatim
    text = " ".join(m["content"] for m in small.messages)
    assert "Question 0" not in text and "Question 2" in text


def test_cancel_rolls_back(runtime: Runtime) -> None:
    s = runtime.new_session()
    runtime.run_turn(TurnRequest(s.id, "first", label="L0"))
    before = branch(runtime.db(), s.id)
    cancel = threading.Event()
    with pytest.raises(TurnError, match="cancelled"):
        runtime.run_turn(
            TurnRequest(s.id, "tell me a long story", label="L0"),
            TurnEvents(cancel=cancel, on_text=lambda _p: cancel.set()),
        )
    assert branch(runtime.db(), s.id) == before


def test_retry_creates_a_branch_and_keeps_the_old_one(runtime: Runtime) -> None:
    s = runtime.new_session()
    first = runtime.run_turn(TurnRequest(s.id, "name a fruit", label="L0"))
    retry = runtime.run_turn(TurnRequest(s.id, "name a vegetable", label="L0", parent_id=None))
    assert [t.id for t in branch(runtime.db(), s.id)] == [retry.id]
    assert [t.id for t in branch(runtime.db(), s.id, first.id)] == [first.id]


def test_export_import_round_trip(runtime: Runtime) -> None:
    s = runtime.new_session("round trip")
    runtime.run_turn(TurnRequest(s.id, "hi", label="L0"))
    runtime.run_turn(TurnRequest(s.id, "write hello world in python", label="L2"))
    runtime.finish_pending()
    exported = export_session(runtime.db(), s.id, fmt="json")
    new_id = import_session(runtime.db(), exported, labels=runtime.profile.labels)
    a, b = branch(runtime.db(), s.id), branch(runtime.db(), new_id)
    assert [(t.request, t.answer, t.label) for t in a] == [
        (t.request, t.answer, t.label) for t in b
    ]


def test_a_summary_past_the_profiles_wait_is_a_provisional_note(runtime: Runtime) -> None:
    """A catch-up summary (one a killed run left unwritten) is written in the background; a
    view waits for it at most ``summary_wait_s`` (a turn's own summary, written before the next
    answer, is always waited for: tests/turns/test_summaries_keep_up.py)."""
    from macaron_local.store import get_turn
    from macaron_local.turns.summary import provisional_summary

    profile = runtime.profile
    s = runtime.new_session()
    first = runtime.run_turn(TurnRequest(s.id, "I am planting tulips this weekend.", label="L0"))
    runtime.finish_pending()
    with runtime.db().conn:  # as if a killed run had not written it (committed)
        runtime.db().execute("DELETE FROM summaries WHERE turn_id = ?", [first.id])
    memory = profile.memory.model_copy(update={"summary_wait_s": 0.0})
    runtime.profile = profile.model_copy(update={"memory": memory})
    gate = threading.Event()
    blocker = runtime._summarizer.submit(gate.wait, 60)  # turn 1's catch-up queues behind it
    try:
        second = runtime.run_turn(
            TurnRequest(s.id, "Write a Python list of three flowers.", label="L2")
        )
        turn = get_turn(runtime.db(), second.id)
        assert turn.meta["provisional_summaries"] == [first.id]
        one = get_turn(runtime.db(), first.id)
        view = runtime._view("L2", [one], "and now?")  # still pending: the stand-in again
        assert view.messages[1] == summary_note(runtime.profile, one, provisional_summary(one))
        assert view.messages[1]["content"].startswith(
            "[Earlier turn handled by L0 Chat] (provisional) The user asked: I am planting "
            "tulips this weekend. The answer began: "
        )
    finally:
        gate.set()
        blocker.result()
        runtime.profile = profile
    runtime.finish_pending()
    real = summaries(runtime.db(), [first.id])[first.id].text  # written after all
    view = runtime._view("L2", branch(runtime.db(), s.id), "and one more?")
    assert summary_note(runtime.profile, get_turn(runtime.db(), first.id), real) in view.messages
    assert not any("(provisional)" in m["content"] for m in view.messages)


def test_a_later_start_restores_the_routers_prompt_from_disk(
    runtime: Runtime, runtime_home
) -> None:
    """The first start reads the router's fixed prompt (~2 s on 2 cores) and saves it under
    the cache folder; later starts restore it before the first message can arrive."""
    import time

    from macaron_local.turns.route import ROUTE_SLOT, route_messages

    saved = runtime_home / "cache" / "kv"
    deadline = time.monotonic() + 300
    while not list(saved.glob("*.kv")) and time.monotonic() < deadline:
        time.sleep(0.2)  # the first start's background read and save
    assert list(saved.glob("*.kv"))
    runtime.engine.reset()  # as at a new start: no slot holds anything
    with macaron_home(runtime_home):
        runtime._warm_router()
    prompt = runtime.engine.render_chat(route_messages(runtime.profile, "", runtime.tools))
    held = runtime.engine.slots()[ROUTE_SLOT][1]
    assert held == len(runtime.engine.tokenize(prompt))  # at once, not chunk by chunk


def test_a_turn_left_without_a_summary_is_waited_for_only_as_long_as_the_profile_says(
    runtime: Runtime,
) -> None:
    """A turn a killed run left without its summary gets one made at the next start. A view
    that needs it waits at most ``summary_wait_s`` like for any other (it used to be made on the
    spot at interactive priority, whatever the wait), and it is written in the background."""
    s = runtime.new_session()
    first = runtime.run_turn(TurnRequest(s.id, "My sister is visiting on Friday.", label="L0"))
    runtime.finish_pending()
    runtime.db().execute("DELETE FROM summaries WHERE turn_id = ?", [first.id])
    runtime.db().conn.commit()
    turn = next(t for t in branch(runtime.db(), s.id) if t.id == first.id)
    gate = threading.Event()
    blocker = runtime._summarizer.submit(gate.wait, 60)  # the writer is busy
    try:
        assert runtime.summary_for(turn, timeout=0.0) is None  # no wait past the profile's
        assert first.id in runtime._pending  # queued, not dropped
    finally:
        gate.set()
        blocker.result()
    runtime.finish_pending()
    assert summaries(runtime.db(), [first.id])[first.id].text
