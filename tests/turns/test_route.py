"""The route hop with the previous turn: where it goes in the prompt, and that L0 reads it."""

from __future__ import annotations

from macaron_local.engine.tokenizer import shared_tokenizer
from macaron_local.hcp import load_profile
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import PREVIOUS_CHARS, previous_line, route, route_messages
from macaron_local.turns.tools import tool_descriptions


def test_the_previous_turn_comes_after_the_cached_prompt() -> None:
    profile, tools, tok = load_profile("tall-local"), tool_descriptions(), shared_tokenizer()
    plain = route_messages(profile, "now make it skip negative numbers", tools)
    follow = route_messages(
        profile, "now make it skip negative numbers", tools, ("L2", "write sum_squares(nums)")
    )
    assert follow[0] == plain[0]  # the fixed system prompt is the same message
    assert follow[1]["content"] == (
        "Previous turn: L2 — write sum_squares(nums)\nnow make it skip negative numbers"
    )
    # what the pipeline prefills and caches (an empty request) is a prefix of both prompts
    warm = tok.render_chat(route_messages(profile, "", tools))
    head = warm[: warm.rindex("<|im_end|>")]
    assert tok.render_chat(follow).startswith(head)
    assert tok.render_chat(plain).startswith(head)


def test_the_digest_is_one_short_line() -> None:
    line = previous_line(("L1", "Order 114-2231\n\nwas  cancelled " + "x" * 400))
    assert "\n" not in line
    assert line.startswith("Previous turn: L1 — Order 114-2231 was cancelled x")
    assert line.endswith("…")
    assert len(line) == len("Previous turn: L1 — ") + PREVIOUS_CHARS


def test_the_router_routes_a_follow_up_with_its_conversation(runtime: Runtime) -> None:
    """The bundled L0 reads the previous turn: one follow-up, two conversations, two labels."""

    def routed(previous: tuple[str, str]) -> str:
        r = route(
            runtime.engine,
            runtime.profile,
            "now make it skip negative numbers",
            adapter=runtime.bindings["L0"].adapter,
            tools=runtime.tools,
            previous=previous,
        )
        assert r.kind == "auto", r.error
        assert abs(sum(r.probs.values()) - 1.0) < 1e-3
        return r.label

    assert routed(("L2", "write a python function sum_squares(nums)")) == "L2"
    assert routed(("L1", "add up the amounts in expenses.csv and tell me the total")) == "L1"
