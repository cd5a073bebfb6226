"""The promotion gate's decision on measured metrics (the measuring itself runs in
tests/experience/test_refine_loop.py on the real model)."""

from __future__ import annotations

from macaron_local.refine.gate import GateConfig, decide

BEFORE = {
    "heldout": {"nll": 2.0, "check": 0.0},
    "regression": {"route_acc": 0.99, "answer_nll": 3.3},
}


def _after(route_acc: float, answer_nll: float = 3.3) -> dict[str, dict[str, float]]:
    return {
        "heldout": {"nll": 1.0, "check": 0.5},
        "regression": {"route_acc": route_acc, "answer_nll": answer_nll},
    }


def test_a_drop_of_exactly_the_threshold_passes_and_one_more_miss_does_not() -> None:
    cfg = GateConfig(max_regression=0.02)
    assert decide(BEFORE, _after(0.97), cfg).passed  # 0.97 - 0.99 is -0.020000000000000018
    refused = decide(BEFORE, _after(0.965), cfg)
    assert not refused.passed
    assert refused.reasons == ["regression suite route_acc regressed beyond 0.02: 0.9900 -> 0.9650"]


def test_nll_regression_is_relative() -> None:
    cfg = GateConfig(max_regression=0.02)
    assert decide(BEFORE, _after(0.99, 3.3 * 1.02), cfg).passed
    assert not decide(BEFORE, _after(0.99, 3.3 * 1.021), cfg).passed
