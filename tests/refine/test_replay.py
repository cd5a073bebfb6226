"""The refine loop's replay slice: drawn from the label's own bootstrap mix, by its roles."""

from __future__ import annotations

from macaron_local.hcp import load_profile
from macaron_local.refine.bootstrap import mix_kinds, replay_slice


def test_the_router_replays_routing_and_chat_rows_in_equal_shares() -> None:
    profile = load_profile("tall-local")
    router = profile.router_label
    assert {"route", "chat"} <= set(mix_kinds(profile, router))
    got = replay_slice(router, profile, {}, 9, seed=3)
    system_prompts = {ex["messages"][0]["content"] for ex in got}
    assert len(got) == 9
    # three kinds (routing rows, chat conversations, the label's summary rows): three each
    routed = [ex for ex in got if ex["messages"][-1]["content"] in profile.labels]
    assert len(routed) == 3
    assert len(system_prompts) >= 2  # not one kind only
    assert replay_slice(router, profile, {}, 9, seed=3) == got  # seeded


def test_no_slice_without_rows_to_draw() -> None:
    profile = load_profile("tall-local")
    assert replay_slice(profile.router_label, profile, {}, 0) == []
