"""Client tools and the approval gate, through the official ``openai`` client against a real
``macaron serve`` on 127.0.0.1 (the embedded model). The tests assert the protocol; where the
model's choice matters, ``tool_choice`` forces it."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from macaron_local.store import get_session, get_turn, open_db
from tests.serve.conftest import SERVE_PROFILE, Server, start_server

PROFILE = SERVE_PROFILE.replace('id = "serve-fast"', 'id = "serve-tools"') + (
    "\n[sampling.overrides.L1]\nmax_tokens = 96\n"  # room for a call block and a short answer
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {"name": "local_time", "description": "The time now.", "parameters": {}},
}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("serve-tools")
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "serve-tools.toml").write_text(PROFILE)
    srv = start_server(home, "--profile", "serve-tools", "--concurrency", "2")
    yield srv
    assert srv.stop() == 0, srv.log.read_text()


def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def _call(done: Any) -> Any:
    choice = done.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    (call,) = choice.message.tool_calls
    assert call.id.startswith("call_") and call.type == "function"
    return call


def test_a_named_function_comes_back_as_a_call_and_its_result_goes_to_the_same_agent(
    server: Server,
) -> None:
    c = client(server)
    done = c.chat.completions.create(
        model="serve-tools",
        messages=ASK,
        tools=[WEATHER, TIME],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    )
    call = _call(done)
    args = json.loads(call.function.arguments)
    assert call.function.name == "get_weather"
    assert isinstance(args["city"], str) and set(args) <= {"city", "unit"}
    ext = done.model_extra["macaron"]
    assert (ext["label"], ext["route"]) == ("L1", "tools")  # the profile's agent label
    assert [h["hop"] for h in done.usage.model_extra["hops"]] == ["answer"]  # no route hop
    # the client ran it: its result goes back, stateless, to the agent that called
    follow = [
        *ASK,
        done.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp_c": 18, "sky": "cloudy"}'},
    ]
    after = c.chat.completions.create(model="serve-tools", messages=follow, tools=[WEATHER])
    ext = after.model_extra["macaron"]
    assert (ext["label"], ext["route"]) == ("L1", "sticky")
    assert after.choices[0].finish_reason in {"stop", "length", "tool_calls"}
    if after.choices[0].finish_reason != "tool_calls":
        assert after.choices[0].message.content.strip()
        assert not after.choices[0].message.tool_calls


def test_a_streamed_required_call_arrives_as_one_tool_call_delta(server: Server) -> None:
    chunks = list(
        client(server).chat.completions.create(
            model="serve-tools:L1",
            messages=[{"role": "user", "content": "What time is it?"}],
            tools=[TIME, WEATHER],
            tool_choice="required",
            stream=True,
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[0].model_extra["macaron"]["route"] == "manual"  # the name pins the agent
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "```" not in text  # the call block never leaks as content
    deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or ()]
    assert len(deltas) == 1
    (delta,) = deltas
    assert delta.index == 0 and delta.id.startswith("call_") and delta.type == "function"
    assert delta.function.name in {"local_time", "get_weather"}
    assert isinstance(json.loads(delta.function.arguments), dict)
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [f.choices[0].finish_reason for f in finals] == ["tool_calls"]


def test_tool_choice_none_answers_in_text(server: Server) -> None:
    done = client(server).chat.completions.create(
        model="serve-tools", messages=ASK, tools=[WEATHER], tool_choice="none"
    )
    choice = done.choices[0]
    assert choice.finish_reason in {"stop", "length"} and not choice.message.tool_calls
    assert choice.message.content.strip() and not choice.message.content.startswith("```")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"tools": [{"type": "function", "function": {"name": "bad name"}}]}, "function name"),
        (
            {
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "string"}},
                    }
                ]
            },
            "type 'object'",
        ),
        ({"tools": [WEATHER, WEATHER]}, "a second tool"),
        ({"tools": [{"type": "retrieval", "function": {"name": "f"}}]}, "only function tools"),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "not a tool sent",
        ),
        ({"tool_choice": "required"}, "needs tools"),
        ({"tools": [WEATHER], "tool_choice": "always"}, "tool_choice is"),
        ({"tools": [WEATHER], "model": "serve-tools:L2"}, "agent label L1"),
        (
            {"messages": [*ASK, {"role": "tool", "tool_call_id": "call_x", "content": "{}"}]},
            "tool_call_id",
        ),
        (
            {
                "messages": [
                    *ASK,
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": "{nope"},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": "{}"},
                ]
            },
            "not JSON",
        ),
    ],
)
def test_bad_tools_get_400_before_any_turn(
    server: Server, change: dict[str, Any], expected: str
) -> None:
    body = {"model": "serve-tools", "messages": ASK, **change}
    r = httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=120)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert expected in r.json()["error"]["message"]


def test_client_tools_in_a_stored_conversation_store_the_answered_turn(server: Server) -> None:
    """The call goes back to the client and nothing is stored; the result goes to the same
    agent with the conversation's history; the answer is one turn whose steps are the client's
    call and result, and the conversation goes on from it."""
    c, conv = client(server), {"X-Conversation-Id": "tools-conv"}
    done = c.chat.completions.create(
        model="serve-tools",
        messages=ASK,
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        extra_headers=conv,
    )
    call = _call(done)
    ext = done.model_extra["macaron"]
    session, db = ext["session"], open_db(server.db)
    assert ext["turn"] is None and ext["conversation"] == "tools-conv"
    assert get_session(db, session).head_turn_id is None  # a call is not a turn yet
    result = '{"temp_c": 18, "sky": "cloudy"}'
    follow = [
        *ASK,
        done.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": result},
    ]
    after = c.chat.completions.create(
        model="serve-tools",
        messages=follow,
        tools=[WEATHER],
        tool_choice="none",
        extra_headers=conv,
    )
    ext = after.model_extra["macaron"]
    assert (ext["label"], ext["route"], ext["session"]) == ("L1", "sticky", session)
    answer = after.choices[0].message.content
    assert after.choices[0].finish_reason in {"stop", "length"} and answer.strip()
    turn = get_turn(db, ext["turn"])
    assert (turn.request, turn.answer, turn.label) == (ASK[0]["content"], answer, "L1")
    assert turn.meta["client_tools"] == ["get_weather"]
    (step,) = turn.tool_calls
    assert (step.status, step.result) == ("ok", result)
    assert json.loads(step.code.strip("`").removeprefix("call\n")) == {
        "tool": "get_weather",
        "args": json.loads(call.function.arguments),
    }
    assert ext["tool_steps"] == [
        {"step": 0, "code": step.code, "status": "ok", "result": result}
    ]  # the extension is the turn's record
    assert get_session(db, session).head_turn_id == turn.id
    more = c.chat.completions.create(
        model="serve-tools:L0",
        messages=[{"role": "user", "content": "thanks"}],
        extra_headers=conv,
    )
    assert get_turn(db, more.model_extra["macaron"]["turn"]).parent_id == turn.id


def test_a_conversation_tool_result_needs_the_user_message_that_asked(server: Server) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    messages = [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    body = {"model": "serve-tools", "messages": messages, "tools": [WEATHER]}
    r = httpx.post(
        f"{server.url}/v1/chat/completions",
        json=body,
        headers={"X-Conversation-Id": "tools-bad"},
        timeout=120,
    )
    assert r.status_code == 400, r.text
    assert "since the last user message" in r.json()["error"]["message"]


@pytest.mark.parametrize("conversation", [{"X-Conversation-Id": "approve-bad"}, {}])
def test_a_bad_approval_header_is_refused(server: Server, conversation: dict[str, str]) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        client(server).chat.completions.create(
            model="serve-tools:L1",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={**conversation, "X-Macaron-Approve": "rm -rf"},
        )
    assert "X-Macaron-Approve" in str(err.value)


# requests the shipped agent has answered with a side-effecting call (which one it makes
# depends on the adapter revision; the tests take the first that makes one)
ACTIONS = [
    "add 'buy oat milk' to my todo list",
    "remind me to call mom at 5pm",
    "add a todo: renew my passport",
    "take a note: the spare key is under the blue pot",
]


def _agent_turn(server: Server, conversation: str, ask: str, **headers: str) -> Any:
    done = client(server).chat.completions.create(
        model="serve-tools:L1",
        messages=[{"role": "user", "content": ask}],
        extra_headers={"X-Conversation-Id": conversation, **headers},
    )
    ext = done.model_extra["macaron"]
    stored = get_turn(open_db(server.db), ext["turn"]).tool_calls
    assert [(c.code, c.status, c.result) for c in stored] == [
        (s["code"], s["status"], s["result"]) for s in ext.get("tool_steps", [])
    ]  # the extension is the turn's record
    return done


@pytest.fixture(scope="module")
def declined(server: Server) -> tuple[str, Any, dict[str, Any]]:
    """The first of ACTIONS whose unapproved turn made a side-effecting call: the request,
    the response and the declined step."""
    seen = []
    for i, ask in enumerate(ACTIONS):
        done = _agent_turn(server, f"unapproved-{i}", ask)
        steps = done.model_extra["macaron"].get("tool_steps", [])
        seen.append(steps)
        if refused := [s for s in steps if s["status"] == "declined"]:
            return ask, done, refused[0]
    pytest.fail(f"the agent made no side-effecting call for any of {ACTIONS}: {seen}")


def _tool(step: dict[str, Any]) -> str:
    found = re.search(r"declined to run: (\w+\.\w+)\(", step["result"])
    assert found, step
    return found.group(1)


def test_a_side_effecting_call_is_declined_without_approval(
    server: Server, declined: tuple[str, Any, dict[str, Any]]
) -> None:
    ask, done, step = declined
    assert step["result"].startswith("PermissionError: the user declined to run:")
    steps = done.model_extra["macaron"]["tool_steps"]
    if steps[-1]["status"] == "declined":  # the record decides what the answer may claim
        assert "declined" in done.choices[0].message.content, done.choices[0].message.content


def test_an_approved_side_effecting_call_runs(
    server: Server, declined: tuple[str, Any, dict[str, Any]]
) -> None:
    ask, _, step = declined
    tool = _tool(step)
    table = tool.split(".")[0]  # todos, notes, reminders: the personal.db table it writes
    before = _rows(server, table)
    done = _agent_turn(server, "approved", ask, **{"X-Macaron-Approve": f"notes.list, {tool}"})
    steps = done.model_extra["macaron"]["tool_steps"]
    again = steps[step["step"]]  # the same view: the same call at the same step
    assert again["code"] == step["code"], steps
    assert again["status"] in {"ok", "error"} and "declined" not in again["result"], again
    if again["status"] == "ok" and tool.endswith(".add"):
        assert _rows(server, table) == before + 1  # it ran: the row is there


def _rows(server: Server, table: str) -> int:
    path = server.home / "data" / "personal.db"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            return 0
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _streamed_text(chunks: list[Any]) -> tuple[str, list[dict[str, Any]], str]:
    """What a streaming client ends up showing: content deltas, less what each notice voids
    (``discarded_chars``); with the notices and the turn id from the last extension."""
    text, notices, turn = "", [], ""
    for part in chunks:
        ext = (part.model_extra or {}).get("macaron", {})
        if notice := ext.get("notice"):
            notices.append(notice)
            text = text[: len(text) - notice["discarded_chars"]]
        if part.choices and part.choices[0].delta.content:
            text += part.choices[0].delta.content
        turn = ext.get("turn", turn)
    return text, notices, turn


@pytest.mark.parametrize("ask", ACTIONS[:2])
def test_a_streamed_agent_answer_ends_as_the_answer_the_record_backs(
    server: Server, ask: str
) -> None:
    stream = client(server).chat.completions.create(
        model="serve-tools:L1",
        messages=[{"role": "user", "content": ask}],
        stream=True,
        extra_headers={"X-Conversation-Id": f"streamed-{ACTIONS.index(ask)}"},
    )
    text, notices, turn = _streamed_text(list(stream))
    stored = get_turn(open_db(server.db), turn)
    # a claim the record contradicts is replaced, and the client is told to replace it too
    assert text.strip() == stored.answer.strip(), (text, stored.answer, notices)
    for notice in notices:
        if notice["kind"] == "rewritten":
            assert notice["message"].startswith("the streamed answer was replaced")
