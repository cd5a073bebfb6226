"""The official ``openai`` client against ``macaron serve`` (a subprocess on 127.0.0.1)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import openai
import pytest

from macaron_local.store import branch, list_sessions, open_db
from tests.serve.conftest import TOKEN, Server, server_env, start_server, write_serve_profile


def client(server: Server, key: str = "unused", **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0, **kw)


def test_models_lists_the_routed_model_and_each_pinned_specialist(server: Server) -> None:
    ids = [m.id for m in client(server).models.list()]
    assert ids == ["serve-fast", "serve-fast:L0", "serve-fast:L1", "serve-fast:L2", "serve-fast:L3"]


def test_non_streaming_stateless_answer_counts_route_and_answer(server: Server) -> None:
    before = len(list_sessions(open_db(server.db)))
    done = client(server).chat.completions.create(
        model="serve-fast", messages=[{"role": "user", "content": "What is the capital of Italy?"}]
    )
    assert done.choices[0].message.content.strip()
    assert done.choices[0].finish_reason in {"stop", "length"}
    ext = done.model_extra["macaron"]
    assert ext["label"] in {"L0", "L1", "L2", "L3"} and ext["route"] in {"auto", "fallback"}
    assert ext["adapter_revision"] and ext["session"] is None and ext["turn"] is None
    hops = done.usage.model_extra["hops"]
    assert [h["hop"] for h in hops][0] == "route" and "answer" in [h["hop"] for h in hops]
    assert "summary" not in [h["hop"] for h in hops]  # stateless: no summary computed
    assert done.usage.prompt_tokens == sum(h["prompt_tokens"] for h in hops) > 0
    assert done.usage.completion_tokens == sum(h["completion_tokens"] for h in hops) > 0
    assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens
    assert len(list_sessions(open_db(server.db))) == before  # nothing stored


def test_streaming_sends_the_route_first_and_usage_of_every_hop_last(server: Server) -> None:
    chunks = list(
        client(server).chat.completions.create(
            model="serve-fast",
            messages=[{"role": "user", "content": "Tell me about tea."}],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Conversation-Id": "stream-1"},
        )
    )
    first = chunks[0]
    assert first.choices[0].delta.role == "assistant"
    route = first.model_extra["macaron"]
    assert {"label", "route", "adapter_revision", "probs"} <= set(route)
    assert route["conversation"] == "stream-1"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip()
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].model_extra["macaron"]["turn"]
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None
    hops = [h["hop"] for h in usage.model_extra["hops"]]
    assert hops[0] == "route" and "answer" in hops and hops[-1] == "summary"
    assert usage.completion_tokens == sum(h["completion_tokens"] for h in usage.model_extra["hops"])
    summary = usage.model_extra["hops"][-1]
    assert summary["completion_tokens"] > 0  # the usage waited for the background summary


def test_one_conversation_id_is_one_session_with_both_turns(server: Server) -> None:
    c = client(server)
    headers = {"X-Conversation-Id": "conv-two-turns"}
    asks = ["My name is Ada.", "What is my name?"]
    replies = [
        c.chat.completions.create(
            model="serve-fast",
            messages=[{"role": "user", "content": ask}],
            extra_headers=headers,
        )
        for ask in asks
    ]
    sessions = {r.model_extra["macaron"]["session"] for r in replies}
    assert len(sessions) == 1
    (session,) = sessions
    turns = branch(open_db(server.db), session)
    assert [t.request for t in turns] == asks
    assert [t.id for t in turns] == [r.model_extra["macaron"]["turn"] for r in replies]
    assert turns[1].parent_id == turns[0].id


def test_pinned_model_name_skips_routing(server: Server) -> None:
    done = client(server).chat.completions.create(
        model="serve-fast:L2", messages=[{"role": "user", "content": "hello"}]
    )
    ext = done.model_extra["macaron"]
    assert (ext["label"], ext["route"]) == ("L2", "manual")
    assert [h["hop"] for h in done.usage.model_extra["hops"]] == ["answer"]


def test_a_client_that_leaves_cancels_its_turn(server: Server) -> None:
    conv = {"X-Conversation-Id": "leaves-early"}
    body = {
        "model": "serve-fast:L3",  # up to 600 tokens: the client leaves long before the end
        "stream": True,
        "messages": [{"role": "user", "content": "Write a very long story about a lighthouse."}],
    }
    with httpx.Client(base_url=server.url, timeout=600) as http:
        with http.stream("POST", "/v1/chat/completions", json=body, headers=conv) as resp:
            assert resp.status_code == 200
            for line in resp.iter_lines():
                if '"content"' in line and '"role"' not in line:
                    break  # the answer has started: hang up
        # the cancelled turn was rolled back: the conversation has no turn yet, and goes on
        done = client(server).chat.completions.create(
            model="serve-fast:L0", messages=[{"role": "user", "content": "hi"}], extra_headers=conv
        )
    session = done.model_extra["macaron"]["session"]
    turns = branch(open_db(server.db), session)
    assert [t.request for t in turns] == ["hi"]


def test_bad_requests_get_openai_errors(server: Server) -> None:
    c = client(server)
    with pytest.raises(openai.BadRequestError) as err:
        c.chat.completions.create(model="x", messages=[{"role": "assistant", "content": "hi"}])
    assert "last message" in str(err.value)
    with pytest.raises(openai.BadRequestError):
        c.chat.completions.create(
            model="x",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-Conversation-Id": "bad id with spaces"},
        )


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with a token, one turn at a time and no queue."""
    home = tmp_path_factory.mktemp("serve-strict")
    env = server_env(home, MACARON_SERVE_TOKEN=TOKEN)
    args = ("--profile", write_serve_profile(home), "--concurrency", "1", "--queue", "0")
    srv = start_server(home, *args, env=env)
    yield srv
    assert srv.stop() == 0, srv.log.read_text()


def test_a_token_is_enforced_when_set(strict: Server) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(strict, key="wrong-token-0123456789").models.list()
    with pytest.raises(httpx.HTTPStatusError) as err:
        httpx.get(f"{strict.url}/v1/models").raise_for_status()
    assert err.value.response.status_code == 401
    assert [m.id for m in client(strict, key=TOKEN).models.list()][0] == "serve-fast"
    assert strict.health()[0] == 200  # the health probe needs no token


def test_429_with_retry_after_when_the_queue_is_full(strict: Server) -> None:
    c = client(strict, key=TOKEN, timeout=600)
    n = 6
    gate = threading.Barrier(n)
    outcomes: list[object] = [None] * n

    def ask(i: int) -> None:
        gate.wait()
        try:
            outcomes[i] = c.chat.completions.create(
                model="serve-fast:L0",
                messages=[{"role": "user", "content": f"Write a poem number {i}."}],
                extra_headers={"X-Conversation-Id": f"busy-{i}"},
            )
        except openai.RateLimitError as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    refused = [o for o in outcomes if isinstance(o, openai.RateLimitError)]
    answered = [o for o in outcomes if not isinstance(o, openai.RateLimitError)]
    assert refused and answered and None not in outcomes, outcomes
    assert all(int(e.response.headers["retry-after"]) >= 1 for e in refused)
    assert all(e.body["code"] == "queue_full" for e in refused)
    db = open_db(strict.db)
    stored = [s for s in list_sessions(db) if branch(db, s.id)]
    assert len(stored) == len(answered)  # a refused request left nothing behind
    admission = strict.health()[1]["admission"]
    assert (admission["peak_active"], admission["peak_waiting"]) == (1, 0)
    assert admission["rejected"] == len(refused)
