"""The heavy-turn rules, the /remote command, and the health gate's backoff (no network)."""

from __future__ import annotations

import pytest

from macaron_local.hcp import load_profile
from macaron_local.hcp.schema import HeavyRules
from macaron_local.remote import (
    Health,
    RemoteHook,
    conversation_id,
    expected_answer_tokens,
    heavy_reason,
    split_remote_command,
)

RULES = HeavyRules(labels=("L2",), long_answer_tokens=1024)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"label": "L0", "text": "hi"}, None),
        ({"label": "L0", "text": "hi", "forced": True}, "forced"),
        ({"label": "L2", "text": "fix this"}, "label"),
        ({"label": "L0", "text": "hi", "local_missing": True}, "local_missing"),
        ({"label": "L0", "text": "hi", "view_too_long": True}, "long_view"),
        ({"label": "L0", "text": "write me a 2000 word essay"}, "long_answer"),
        ({"label": "L0", "text": "write me a 20 word poem"}, None),
        ({"label": "L2", "text": "x", "forced": True, "local_missing": True}, "forced"),
    ],
)
def test_heavy_rules_in_order(kwargs: dict, code: str | None) -> None:
    got = heavy_reason(RULES, **kwargs)
    assert (got.code if got else None) == code


def test_rules_that_are_off_do_not_fire() -> None:
    rules = HeavyRules(view_exceeds_local_ctx=False, local_model_missing=False)
    assert heavy_reason(rules, label="L2", text="3 pages", view_too_long=True) is None
    assert heavy_reason(rules, label="L0", text="hi", local_missing=True) is None


def test_expected_answer_tokens_reads_sizes() -> None:
    assert expected_answer_tokens("hello") == 0
    assert expected_answer_tokens("a 200-line script") == 2400
    assert expected_answer_tokens("3 pages, or 500 words") == 1800
    assert expected_answer_tokens("write 1500 tokens") == 1500


def test_split_remote_command() -> None:
    assert split_remote_command("/remote write a parser") == ("write a parser", True)
    assert split_remote_command("  /remote   hi ") == ("hi", True)
    assert split_remote_command("/remote") == ("/remote", False)
    assert split_remote_command("what is /remote?") == ("what is /remote?", False)


def test_conversation_id_is_stable_and_opaque() -> None:
    a = conversation_id("01HSESSION")
    assert a == conversation_id("01HSESSION") != conversation_id("01HOTHER")
    assert "01HSESSION" not in a and a.startswith("mcl-")


def test_health_backs_off_and_recovers() -> None:
    now = [0.0]
    answers = ["timeout", None]
    probes: list[float] = []

    def probe() -> str | None:
        probes.append(now[0])
        return answers.pop(0)

    h = Health(probe, base_s=2.0, max_s=8.0, clock=lambda: now[0])
    assert h.usable() == (True, None)
    h.failed("refused")
    assert h.usable() == (False, "refused") and probes == []  # inside the window: no probe
    now[0] = 2.0
    assert h.usable() == (False, "timeout")  # probed, failed: the window doubles (2 -> 4)
    assert h.state().failures == 2 and h.state().retry_in_s == pytest.approx(4.0)
    now[0] = 5.9
    assert h.usable()[0] is False and probes == [2.0]
    now[0] = 6.0
    assert h.usable() == (True, None) and probes == [2.0, 6.0]
    assert h.state().up


def test_retry_after_stretches_the_window() -> None:
    now = [0.0]
    h = Health(lambda: None, base_s=1.0, clock=lambda: now[0])
    h.failed("rate_limited", retry_after=30.0)
    now[0] = 29.0
    assert h.usable() == (False, "rate_limited")
    now[0] = 30.0
    assert h.usable() == (True, None)


def test_plan_sends_an_overflowing_view_remote_with_a_long_view() -> None:
    """The plan is pure: the pipeline says whether its local view fits (or was compacted) and
    builds the longer remote view itself when the plan asks for one."""
    hook = RemoteHook(load_profile("hybrid"), environ={})
    plan = hook.plan("L0", "hi", fits_locally=False, compacted=False)
    assert plan.heavy is not None and plan.heavy.code == "long_view"
    assert plan.remote and plan.long_view and not plan.fits_locally


def test_plan_keeps_light_turns_and_tool_turns_local() -> None:
    hook = RemoteHook(load_profile("hybrid"), environ={})
    assert not hook.plan("L0", "hi", fits_locally=True, compacted=False).remote
    tool = hook.plan("L1", "hi", fits_locally=True, compacted=False, forced=True, uses_tools=True)
    assert not tool.remote and tool.notice and "locally" in tool.notice
    compacted = hook.plan("L0", "hi", fits_locally=True, compacted=True)
    assert compacted.heavy is not None and compacted.heavy.code == "long_view"
    assert compacted.long_view  # the remote gets the view uncompacted


def test_disabled_profile_is_local_unless_forced() -> None:
    hook = RemoteHook(load_profile("tall-local"), environ={"MACARON_REMOTE_URL": "http://h:1"})
    assert not hook.plan("L2", "fix", fits_locally=True, compacted=False).remote
    assert hook.endpoint() is None
    forced = hook.plan("L0", "hi", fits_locally=True, compacted=False, forced=True)
    assert forced.heavy is not None and forced.heavy.code == "forced" and not forced.long_view
    assert hook.endpoint(forced=True) == "http://h:1"
