"""Hybrid turns on the real engine and a real llama.cpp OpenAI server: remote, and failover.

Heavy turns (L2 in the hybrid profile, a long view, or ``remote=True``) go to the server through
the fault proxy; each fault must rerun the turn locally, tell the user why, discard the partial
remote text, and record the reason on the turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from macaron_local.errors import TurnError
from macaron_local.remote import Notice, conversation_id
from macaron_local.store import TurnRecord, branch, get_turn, summaries
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnEvents, TurnRequest
from tests.remote.conftest import Clock
from tests.remote.faultproxy import Fault, FaultProxy
from tests.remote.venti import SERVED, Venti

CHAT = "/v1/chat/completions"


@dataclass
class Ran:
    result: TurnRecord
    events: list[tuple[str, object]] = field(default_factory=list)  # ("text"|"notice", ...)

    @property
    def notices(self) -> list[Notice]:
        return [n for kind, n in self.events if kind == "notice"]  # type: ignore[misc]

    def text_after_failover(self) -> str:
        last = max(i for i, (kind, n) in enumerate(self.events) if kind == "notice")
        return "".join(str(p) for kind, p in self.events[last + 1 :] if kind == "text")

    def text_before_failover(self) -> str:
        first = min(i for i, (kind, n) in enumerate(self.events) if kind == "notice")
        return "".join(str(p) for kind, p in self.events[:first] if kind == "text")


def ask(rt: Runtime, text: str, label: str, *, session: str | None = None, **kw: object) -> Ran:
    sid = session or rt.new_session("t").id
    ran = Ran(result=None)  # type: ignore[arg-type]
    ran.result = rt.run_turn(
        TurnRequest(sid, text, label=label, **kw),  # type: ignore[arg-type]
        TurnEvents(
            on_text=lambda p: ran.events.append(("text", p)),
            on_notice=lambda n: ran.events.append(("notice", n)),
        ),
    )
    return ran


def chats(proxy: FaultProxy) -> list:
    return [r for r in proxy.requests if r.path == CHAT]


def test_heavy_label_runs_remote(runtime: Runtime, remote_env: FaultProxy, venti: Venti) -> None:
    first = ask(runtime, "Write a Python function that adds two numbers.", "L2")
    r = first.result
    assert (r.backend, r.meta["heavy"], r.meta["remote_model"]) == ("remote", "label", SERVED)
    assert "failover_reason" not in r.meta and not first.notices
    assert r.answer == "".join(str(p) for _, p in first.events).strip() and r.answer
    stored = get_turn(runtime.db(), r.id)
    assert (stored.backend, stored.failover_reason) == ("remote", None)
    second = ask(runtime, "Now make it subtract.", "L2", session=r.session_id)
    sent = chats(remote_env)
    assert len(sent) == 2
    assert {s.headers["x-conversation-id"] for s in sent} == {conversation_id(r.session_id)}
    assert sent[0].body["model"] == SERVED and sent[0].body["stream"] is True
    assert sent[0].headers["authorization"] == f"Bearer {venti.api_key}"
    # the second request carries the first turn verbatim (its own label's view)
    assert any(m["content"] == r.answer for m in sent[1].body["messages"])
    runtime.finish_pending()  # route and summary stay local: the summary is written here
    assert summaries(runtime.db(), [r.id, second.result.id])[r.id].text


def test_light_turn_stays_local(runtime: Runtime, remote_env: FaultProxy) -> None:
    ran = ask(runtime, "Hello, how are you?", "L0")
    assert ran.result.backend == "local" and "heavy" not in ran.result.meta
    assert chats(remote_env) == [] and not ran.notices


def test_explicit_remote_forces_the_remote(runtime: Runtime, remote_env: FaultProxy) -> None:
    ran = ask(runtime, "Hello, how are you?", "L0", remote=True)
    assert (ran.result.backend, ran.result.meta["heavy"]) == ("remote", "forced")
    assert len(chats(remote_env)) == 1


def test_per_label_model_names(runtime: Runtime, remote_env: FaultProxy) -> None:
    runtime.remote.models = {"L2": "venti-coding-lora"}  # vLLM/SGLang: the adapter is the model
    ran = ask(runtime, "Reverse a string in Python.", "L2")
    assert ran.result.meta["remote_model"] == "venti-coding-lora"
    assert chats(remote_env)[-1].body["model"] == "venti-coding-lora"


FAULTS = [
    (Fault("drop", after_events=3), "stream_broken"),
    (Fault("stall", after_events=3), "timeout"),
    (Fault("status", 500), "server_error"),
    (Fault("status", 429, retry_after="60"), "rate_limited"),
    (Fault("refuse"), "refused"),
]


@pytest.mark.parametrize(
    ("fault", "reason"), FAULTS, ids=[f.kind + str(f.status) for f, _ in FAULTS]
)
def test_each_fault_fails_over_to_local(
    runtime: Runtime, remote_env: FaultProxy, fault: Fault, reason: str
) -> None:
    if fault.kind == "stall":  # a short read timeout, for this test only
        rem = runtime.profile.remote.model_copy(update={"read_timeout_s": 3.0})
        runtime.remote.profile = runtime.profile.model_copy(update={"remote": rem})
    remote_env.set(fault)
    text = "Write a shell command that counts lines in a file."
    ran = ask(runtime, text, "L2")
    r = ran.result
    assert (r.backend, r.meta["failover_reason"], r.meta["heavy"]) == ("local", reason, "label")
    failover = [n for n in ran.notices if n.kind == "failover"]
    assert len(failover) == 1 and failover[0].reason == reason
    # the partial remote text is discarded: the turn holds exactly the local rerun's text
    assert failover[0].discarded_chars == len(ran.text_before_failover())
    if fault.kind == "drop":
        assert failover[0].discarded_chars > 0
    assert r.answer == ran.text_after_failover().strip() and r.answer
    stored = branch(runtime.db(), r.session_id)
    assert [(t.request, t.backend, t.failover_reason) for t in stored] == [(text, "local", reason)]


def test_429_within_the_cap_waits_and_stays_remote(
    runtime: Runtime, remote_env: FaultProxy
) -> None:
    remote_env.set(Fault("status", 429, retry_after="1", times=1))
    ran = ask(runtime, "Explain list comprehensions.", "L2")
    assert ran.result.backend == "remote"
    assert [n.kind for n in ran.notices] == ["waiting"]
    assert len(chats(remote_env)) == 2


def test_down_remote_is_skipped_until_a_health_check_passes(
    runtime: Runtime, remote_env: FaultProxy, clock: Clock
) -> None:
    remote_env.set(Fault("status", 500))
    assert ask(runtime, "Sort a list.", "L2").result.meta["failover_reason"] == "server_error"
    remote_env.clear()
    before = len(remote_env.requests)
    skipped = ask(runtime, "Sort a dict.", "L2")  # inside the backoff window: not even tried
    assert skipped.result.meta["failover_reason"] == "remote_down"
    assert len(remote_env.requests) == before
    clock.now += 60  # the window has passed: a health check, then the turn
    back = ask(runtime, "Sort a set.", "L2")
    assert back.result.backend == "remote"
    paths = [r.path for r in remote_env.requests[before:]]
    assert paths[-1] == CHAT and ("/v1/models" in paths or "/health" in paths[:-1])


def test_no_endpoint_runs_locally_and_says_so(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MACARON_REMOTE_URL", raising=False)
    ran = ask(runtime, "Write a regex for digits.", "L2")
    assert (ran.result.backend, ran.result.meta["failover_reason"]) == ("local", "no_endpoint")
    assert "MACARON_REMOTE_URL" in str(ran.notices[0])


def test_wrong_key_fails_over_as_unauthorized(
    runtime: Runtime, remote_env: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MACARON_REMOTE_API_KEY", "wrong-key-123")
    ran = ask(runtime, "Write a regex for digits.", "L2")
    assert ran.result.meta["failover_reason"] == "unauthorized"


def test_tool_turns_stay_local_even_when_forced(runtime: Runtime, remote_env: FaultProxy) -> None:
    ran = ask(runtime, "What time is it?", "L1", remote=True)
    assert ran.result.backend == "local" and chats(remote_env) == []
    assert [n.kind for n in ran.notices] == ["local"]


def _long_request(rt: Runtime, label: str) -> str:
    """A request whose view overflows the local budget (n_ctx - reserve) but fits the server."""
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    text, n = "Summarize this in one line: ", 0
    budget = rt.engine.n_ctx - rt.profile.memory.answer_reserve
    while True:
        text += sentence
        msgs = [
            {"role": "system", "content": rt.profile.system_prompt(label, rt.tools)},
            {"role": "user", "content": text},
        ]
        n = rt.engine.count_tokens(rt.engine.render_chat(msgs))
        if n > budget + 40:
            return text


def test_a_view_longer_than_the_local_context_goes_remote(
    runtime: Runtime, remote_env: FaultProxy
) -> None:
    text = _long_request(runtime, "L0")
    ran = ask(runtime, text, "L0")
    assert (ran.result.backend, ran.result.meta["heavy"]) == ("remote", "long_view")
    assert chats(remote_env)[-1].body["messages"][-1]["content"] == text
    runtime.finish_pending()  # the local summary of a too-long turn is clipped to fit
    assert summaries(runtime.db(), [ran.result.id])[ran.result.id].text


def test_a_long_view_with_the_remote_failing_rolls_back(
    runtime: Runtime, remote_env: FaultProxy
) -> None:
    s = runtime.new_session("t")
    ask(runtime, "Hello!", "L0", session=s.id)
    before = branch(runtime.db(), s.id)
    remote_env.set(Fault("status", 500))
    notices: list[Notice] = []
    with pytest.raises(TurnError, match="view needs"):
        runtime.run_turn(
            TurnRequest(s.id, _long_request(runtime, "L0"), label="L0"),
            TurnEvents(on_notice=notices.append),
        )
    assert branch(runtime.db(), s.id) == before
    assert notices[0].reason == "server_error" and "cannot take it" in str(notices[0])
