"""The OpenAI chat-completions wire format, as far as ``macaron serve`` speaks it.

Owns parsing a request body (messages with string or text-part content, ``stream``,
``stream_options.include_usage``, a model name that may pin a label) and building responses,
stream chunks and error bodies, including the ``"macaron"`` extension field (route, label,
adapter revision, session and turn). Sampling fields a client sends are accepted and ignored:
the profile (the harness contract) decides sampling. Must not: run anything.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from macaron_local.serve.jobs import Outcome, RouteInfo
from macaron_local.store.db import unicode_problem

EXTENSION = "macaron"


class BadRequest(Exception):  # noqa: N818 - a signal to the HTTP edge
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value not in {"system", "developer", "user", "assistant", "tool", "function"}:
            raise ValueError(f"unknown role {value!r}")
        return value

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "".join(
            str(p.get("text", "")) for p in self.content if p.get("type") in ("text", "input_text")
        )


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = ""
    messages: list[Message]
    stream: bool = False
    stream_options: StreamOptions | None = None

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    def plain_messages(self) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.text()} for m in self.messages]


def parse_request(body: bytes) -> ChatRequest:
    """A validated request whose last message is the user's; :class:`BadRequest` otherwise
    (also for a body that is not UTF-8 or nests deeper than the parser's recursion limit)."""
    try:
        req = ChatRequest.model_validate(json.loads((body or b"null").decode("utf-8")))
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except RecursionError as exc:
        raise BadRequest("the body nests too deeply") from exc
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise BadRequest(f"{where}: {err['msg']}", param=where) from exc
    if not req.messages or req.messages[-1].role != "user":
        raise BadRequest("the last message must be the user's (role 'user')", param="messages")
    if not req.messages[-1].text().strip():
        raise BadRequest("the last user message is empty", param="messages")
    for i, m in enumerate(req.messages):
        if (problem := unicode_problem(m.text())) is not None:
            raise BadRequest(f"messages.{i}: not valid Unicode text ({problem})", f"messages.{i}")
    return req


def model_ids(profile_id: str, labels: tuple[str, ...]) -> list[str]:
    """``<profile>`` routes each turn; ``<profile>:<label>`` pins a specialist."""
    return [profile_id, *(f"{profile_id}:{label}" for label in labels)]


def pinned_label(model: str, labels: tuple[str, ...]) -> str | None:
    """The label a model name pins (``...:L2``), or None: any other name is routed."""
    tail = model.rsplit(":", 1)[-1] if ":" in model else ""
    return tail if tail in labels else None


def new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def extension(route: RouteInfo, outcome: Outcome | None = None, **extra: Any) -> dict[str, Any]:
    data = asdict(route)
    if data["route_error"] is None:
        del data["route_error"]
    if outcome is not None:
        data.update(session=outcome.session_id, turn=outcome.turn_id, backend=outcome.backend)
        if outcome.failover_reason is not None:
            data["failover_reason"] = outcome.failover_reason
    data.update(extra)
    return data


def completion_body(
    cid: str, model: str, outcome: Outcome, usage: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": outcome.text},
                "finish_reason": outcome.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": usage,
        EXTENSION: extension(outcome.route, outcome, **extra),
    }


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any] | None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    ext: dict[str, Any] | None = None,
) -> str:
    """One server-sent event carrying a ``chat.completion.chunk``."""
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        body["usage"] = usage
    if ext is not None:
        body[EXTENSION] = ext
    return sse(body)


def notice_ext(notice: Any) -> dict[str, Any]:
    """The extension of a stream event telling the client about a failover (the remote text
    streamed before it is void: ``discarded_chars``) or a wait."""
    return {
        "notice": {
            "kind": notice.kind,
            "reason": notice.reason,
            "message": notice.message,
            "discarded_chars": notice.discarded_chars,
        }
    }


def sse(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
