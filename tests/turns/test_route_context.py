"""A follow-up is routed with its conversation: the route hop of a turn sees the previous
turn's label and request after the router's fixed prompt (which stays cacheable)."""

from __future__ import annotations

import pytest

from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import ROUTE_SLOT
from macaron_local.turns.turn import TurnRequest


def test_the_route_hop_sees_the_previous_turn(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    render = runtime.engine.render_chat

    def spy(messages, **kw):  # noqa: ANN001, ANN003, ANN202 - the real render, recorded
        out = render(messages, **kw)
        seen.append(messages[-1]["content"])
        return out

    generate = runtime.engine.generate
    prompts: list[str] = []

    def spy_generate(prompt, **kw):  # noqa: ANN001, ANN003, ANN202
        if kw.get("slot") == ROUTE_SLOT:
            prompts.append(seen[-1])
        return generate(prompt, **kw)

    monkeypatch.setattr(runtime.engine, "render_chat", spy)
    monkeypatch.setattr(runtime.engine, "generate", spy_generate)
    s = runtime.new_session()
    first = runtime.run_turn(TurnRequest(s.id, "Write a Python function that sums a list."))
    runtime.run_turn(TurnRequest(s.id, "Now make it skip negative numbers."))
    assert prompts[0] == "Write a Python function that sums a list."  # nothing before it
    assert prompts[1] == (
        f"Previous turn: {first.label} — Write a Python function that sums a list.\n"
        "Now make it skip negative numbers."
    )
