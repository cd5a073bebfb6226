"""Hostile remote streams are bounded: bytes, the answer's token budget, a total deadline.

The fault proxy on 127.0.0.1 plays the hostile server (one 10 MB event, 200,000 pieces for a
12-token answer, a drip that never ends); the client must stop at the bound with one clear
reason, and a turn must fail over to local keeping none of the remote text.
"""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from macaron_local.remote import ChatRequest, RemoteClient, RemoteFailure
from macaron_local.remote.client import MAX_TOKEN_BYTES
from macaron_local.store import branch
from macaron_local.turns.pipeline import Runtime
from tests.remote.faultproxy import Fault, FaultProxy
from tests.remote.test_hybrid import ask
from tests.remote.venti import SERVED, Venti

BUDGET = 12
REQUEST = ChatRequest(
    messages=[{"role": "user", "content": "Say hello."}],
    model=SERVED,
    max_tokens=BUDGET,
    sampling={"temperature": 0.0},
)


def _client(url: str, key: str, **limits: float) -> RemoteClient:
    return RemoteClient(
        url, api_key=SecretStr(key), connect_timeout_s=2.0, read_timeout_s=60.0, **limits
    )


CASES = [
    (Fault("flood", size=10_000_000), {"max_response_bytes": 1 << 20}, "1048576 bytes"),
    (Fault("flood", size=100_000), {"max_response_bytes": 1 << 30}, f"budget of {BUDGET}"),
    (Fault("pieces", size=200_000), {}, f"budget of {BUDGET}"),
]


@pytest.mark.parametrize(("fault", "limits", "said"), CASES, ids=["bytes", "text", "pieces"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_an_answer_past_its_bounds_is_oversized(
    proxy: FaultProxy, venti: Venti, fault: Fault, limits: dict, said: str, stream: bool
) -> None:
    proxy.set(fault)
    shown: list[str] = []
    with pytest.raises(RemoteFailure) as err:
        _client(proxy.url, venti.api_key, **limits).chat(
            REQUEST, stream=stream, on_text=shown.append
        )
    assert err.value.reason == "oversized" and said in str(err.value)
    assert len("".join(shown)) <= BUDGET * MAX_TOKEN_BYTES  # never more than the budget shown


def test_a_drip_inside_the_read_timeout_meets_the_total_deadline(
    proxy: FaultProxy, venti: Venti
) -> None:
    proxy.set(Fault("drip", interval_s=0.05))
    wide = REQUEST.__class__(**{**REQUEST.__dict__, "max_tokens": 1_000_000})
    with pytest.raises(RemoteFailure) as err:
        _client(proxy.url, venti.api_key, total_timeout_s=1.0).chat(wide)
    assert err.value.reason == "timeout" and "total_timeout_s" in str(err.value)


def test_a_normal_answer_is_within_its_bounds(proxy: FaultProxy, venti: Venti) -> None:
    done = _client(proxy.url, venti.api_key, max_response_bytes=65536, total_timeout_s=120.0)
    answer = done.chat(REQUEST)
    assert answer.text and answer.n_generated <= BUDGET


@pytest.mark.parametrize(
    "fault", [Fault("flood", size=10_000_000), Fault("pieces", size=200_000)], ids=["10MB", "200k"]
)
def test_an_oversized_remote_answer_fails_over_and_keeps_none_of_it(
    runtime: Runtime, remote_env: FaultProxy, fault: Fault
) -> None:
    remote_env.set(fault)
    ran = ask(runtime, "Write a shell command that counts lines in a file.", "L2")
    r = ran.result
    assert (r.backend, r.meta["failover_reason"]) == ("local", "oversized")
    [failover] = [n for n in ran.notices if n.kind == "failover"]
    assert failover.discarded_chars == len(ran.text_before_failover())
    assert "333" not in r.answer and r.answer == ran.text_after_failover().strip()
    [stored] = branch(runtime.db(), r.session_id)
    assert (stored.backend, stored.answer) == ("local", r.answer)
