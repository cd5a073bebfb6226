"""The REPL child process: executes code blocks in one namespace, inside the host's sandbox.

Started by the host (``boundary.py``) as ``python -I -S -c ...`` inside bubblewrap, already
confined; it imports only this module and ``sandbox.py``. The first line on stdin is the
``init`` message (policy, tool names, promoted tools, the key its "ready" must carry). The
child moves its protocol to private file descriptors, points fds 0/1 at /dev/null, installs the
audit guard (the second layer) and only then runs model-written code. Each block's "done"
carries the key the host sent with it. SIGINT is ignored between blocks and raises
``KeyboardInterrupt`` inside one: the host's watchdog uses it to stop a block over its limits.
Tools are proxies whose calls are sent to the host as JSON lines; the host answers each one
before the block goes on.

Standard library only; must never import the runtime (engine, store, pydantic).
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import linecache
import os
import signal
import sys
from typing import Any

from macaron_local.agent import sandbox

TRUNCATED = "… [truncated]"


class Channel:
    """JSON lines over two private file descriptors."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self._r = os.fdopen(rfd, "r", encoding="utf-8", buffering=1)
        self._w = os.fdopen(wfd, "w", encoding="utf-8", buffering=1)

    def send(self, msg: dict[str, Any]) -> None:
        self._w.write(json.dumps(msg, default=_jsonable) + "\n")
        self._w.flush()

    def recv(self) -> dict[str, Any]:
        line = self._r.readline()
        if not line:
            os._exit(0)  # the host went away
        msg: dict[str, Any] = json.loads(line)
        return msg


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"tool arguments must be plain data, not {type(value).__name__}")


class CappedIO(io.TextIOBase):
    """stdout/stderr of user code: keeps the first ``cap`` characters, counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.size, self.overflow = cap, 0, False
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        room = self.cap - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        if len(s) > room:
            self.overflow = True
        return len(s)

    def text(self) -> str:
        return "".join(self.parts)


def _raise_from(reply: dict[str, Any]) -> None:
    cls = getattr(builtins, reply.get("type", ""), None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = RuntimeError
    args = reply.get("args") or [reply.get("message", "")]
    raise cls(*args)


class ToolFunction:
    def __init__(self, chan: Channel, name: str, doc: str) -> None:
        self._chan, self._name, self.__doc__ = chan, name, doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._chan.send({"op": "call", "tool": self._name, "args": list(args), "kwargs": kwargs})
        reply = self._chan.recv()
        if reply.get("op") == "raise":
            _raise_from(reply)
        return reply.get("value")

    def __repr__(self) -> str:
        return f"<tool {self._name}>"


class ToolModule:
    def __init__(self, name: str, functions: dict[str, ToolFunction]) -> None:
        self._name = name
        self.__dict__.update(functions)

    def __repr__(self) -> str:
        return f"<tools {self._name}: {', '.join(self._functions())}>"

    def __getattr__(self, attr: str) -> Any:
        """A function the module does not have: say which it has (the model fixes the call)."""
        if attr.startswith("__"):
            raise AttributeError(attr)
        have = ", ".join(f"{self._name}.{f}" for f in self._functions())
        raise AttributeError(
            f"module '{self._name}' has no attribute '{attr}'; its tools are: {have}"
        )

    def _functions(self) -> list[str]:
        return sorted(k for k in self.__dict__ if not k.startswith("_"))


class Repl:
    """The namespace and the code that runs in it."""

    def __init__(self, chan: Channel, cap: int) -> None:
        self.chan, self.cap, self.count = chan, cap, 0
        self.ns: dict[str, Any] = {"__name__": "__repl__", "__builtins__": builtins}

    def bind_tools(self, tools: dict[str, dict[str, str]]) -> None:
        for module, funcs in tools.items():
            fns = {f: ToolFunction(self.chan, f"{module}.{f}", d) for f, d in funcs.items()}
            self.ns[module] = ToolModule(module, fns)
        smith = tools.get("toolsmith", {})
        if "save" in smith:
            self.ns["save_tool"] = self._save_tool
        if "promote" in smith:
            self.ns["promote_tool"] = ToolFunction(self.chan, "toolsmith.promote", smith["promote"])

    def _save_tool(
        self, func: Any, cases: list[Any] | None = None, source: str | None = None
    ) -> Any:
        """save_tool(func, cases=[[args, expected], ...]) keeps ``func`` as a candidate tool."""
        import inspect

        name = func if isinstance(func, str) else func.__name__
        if source is None:
            target = self.ns[name] if isinstance(func, str) else func
            source = inspect.getsource(target)
        self.chan.send(
            {
                "op": "call",
                "tool": "toolsmith.save",
                "args": [name, source],
                "kwargs": {"cases": cases or []},
            }
        )
        reply = self.chan.recv()
        if reply.get("op") == "raise":
            _raise_from(reply)
        return reply.get("value")

    def define_promoted(self, name: str, source: str) -> None:
        exec(compile(source, f"<tool {name}>", "exec"), self.ns)
        inner, chan = self.ns[name], self.chan

        def promoted(*args: Any, **kwargs: Any) -> Any:
            try:
                return inner(*args, **kwargs)
            except Exception as exc:
                chan.send({"op": "tool_failed", "name": name, "error": _one_line(exc)})
                raise

        promoted.__name__, promoted.__doc__ = name, inner.__doc__
        self.ns[name] = promoted

    def compile_block(self, code: str) -> tuple[Any, Any]:
        self.count += 1
        filename = f"<repl-{self.count}>"
        lines = code.splitlines(keepends=True)
        linecache.cache[filename] = (len(code), None, lines, filename)
        tree = ast.parse(code, filename, "exec")
        last = None
        tail = tree.body[-1] if tree.body else None
        if isinstance(tail, ast.Expr):
            tree.body.pop()
            last = ast.Expression(tail.value)
        body = compile(tree, filename, "exec")
        return body, (compile(last, filename, "eval") if last is not None else None)

    def run(self, code: str, want_json: bool = False) -> dict[str, Any]:
        out = CappedIO(self.cap)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        status, value, tail = "ok", None, ""
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            body, last = self.compile_block(code)
            exec(body, self.ns)
            if last is not None:
                value = eval(last, self.ns)
                if value is not None and not want_json:
                    tail = repr(value)
        except BaseException as exc:  # SystemExit and MemoryError come back too
            status, tail = "error", _one_line(exc)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            sys.stdout, sys.stderr = saved
        return self._result(out, tail, status, value if want_json else None)

    def _result(self, out: CappedIO, tail: str, status: str, value: Any) -> dict[str, Any]:
        text = out.text()
        if tail:
            text = text + ("" if not text or text.endswith("\n") else "\n") + tail
        truncated = out.overflow or len(text) > self.cap
        if truncated:
            text = text[: self.cap] + ("\n" if not text[: self.cap].endswith("\n") else "")
            text += TRUNCATED
        elif text.endswith("\n"):
            text = text[:-1]
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = repr(value)
        return {
            "op": "done",
            "output": text,
            "status": status,
            "truncated": truncated,
            "value": value,
        }


def _one_line(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _private_channel() -> Channel:
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return Channel(rfd, wfd)


def main() -> None:
    chan = _private_channel()
    init = chan.recv()
    policy = sandbox.SandboxPolicy(**init["policy"])
    sandbox.apply_limits(policy, set_by_host=bool(init.get("limits_set")))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host's interrupt only stops a block
    repl = Repl(chan, policy.output_chars)
    repl.bind_tools(init.get("tools", {}))
    sandbox.install_guard(policy)
    failed = []
    for tool in init.get("promoted", []):
        try:
            repl.define_promoted(tool["name"], tool["source"])
        except Exception as exc:  # reported to the host, never fatal
            failed.append({"name": tool["name"], "error": _one_line(exc)})
    chan.send({"op": "ready", "failed": failed, "nonce": init.pop("nonce", "")})
    del init
    while True:
        msg = chan.recv()
        op = msg.get("op")
        if op in ("exec", "eval_json"):
            key = msg.pop("nonce", "")
            done = repl.run(msg.pop("code"), want_json=op == "eval_json")
            chan.send({**done, "nonce": key})
            del key
        elif op == "exit":
            os._exit(0)


if __name__ == "__main__":
    main()
