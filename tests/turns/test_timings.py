"""The turn record's timings count from the user's send, on the real runtime.

The first-token time must hold everything before the answer's first text: routing, building
the view (with its summary waits) and queueing, not only the answer request's own wait. No
timing thresholds: each check compares the record with moments the caller saw itself.
"""

from __future__ import annotations

import time

from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnEvents, TurnRequest

ROUNDING_MS = 0.02  # each recorded value is rounded to 0.01 ms; three of them are summed


def test_first_token_time_counts_routing_the_view_and_summary_waits(runtime: Runtime) -> None:
    s = runtime.new_session("timings")
    saved = runtime.profile  # views wait for every summary they show: the wait is in the view
    memory = saved.memory.model_copy(update={"summary_wait_s": None})
    runtime.profile = saved.model_copy(update={"memory": memory})
    try:
        _check_a_turn_after_another(runtime, s.id)
    finally:
        runtime.profile = saved
        runtime.finish_pending()


def _check_a_turn_after_another(runtime: Runtime, session_id: str) -> None:
    runtime.run_turn(TurnRequest(session_id, "What is the capital of Italy?", label="L0"))
    seen: dict[str, float] = {}

    def on_route(_decision: object) -> None:
        seen.setdefault("routed", time.perf_counter())

    def on_text(piece: str) -> None:
        if piece:
            seen.setdefault("first", time.perf_counter())

    sent = time.perf_counter()
    # straight after the first turn: its summary, which this view shows, may still be written
    record = runtime.run_turn(
        TurnRequest(session_id, "Write a Python function that adds two numbers."),
        TurnEvents(on_route=on_route, on_text=on_text),
    )
    done = time.perf_counter()
    t = record.timings
    assert {"route_ms", "view_ms", "summary_wait_ms", "ttft_ms", "answer_ms", "total_ms"} <= set(t)
    assert 0 <= t["summary_wait_ms"] <= t["view_ms"] + ROUNDING_MS
    # the view is built after routing and before the first token: both are in the first token
    assert t["ttft_ms"] + ROUNDING_MS >= t["route_ms"] + t["view_ms"]
    # from the caller's side: no later than the caller saw it, no earlier than routing ended
    # plus what came after (the runtime stamps the piece before handing it over)
    assert t["ttft_ms"] <= (seen["first"] - sent) * 1000 + ROUNDING_MS
    assert t["ttft_ms"] + ROUNDING_MS >= (seen["first"] - seen["routed"]) * 1000
    assert t["ttft_ms"] <= t["total_ms"] <= (done - sent) * 1000 + ROUNDING_MS
