"""Agent tools on the host: specs, the registry plugins fill, the context, and the gate.

Owns the :class:`ToolSpec` a plugin registers, the :class:`ToolRegistry` that holds them, the
:class:`ToolContext` tools read (workspace, data folder, clock), and the :class:`ToolGate` every
call from the REPL or a discrete ``call`` block goes through: the profile's allowlist (glob
patterns over ``module.function``), the confirmation callback for side effects, and a timeout
that keeps a hanging plugin from taking the turn down. It must not run model code (the REPL
child does) nor discover plugins (``macaron_local.plugins`` does).
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import inspect
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from macaron_local import paths
from macaron_local.errors import PluginError

if TYPE_CHECKING:
    from macaron_local.hcp.schema import ToolCatalog

ConfirmFn = Callable[[str, dict[str, Any]], bool]
DEFAULT_TOOL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ToolSpec:
    """One callable tool, named ``module.function`` (``"todos.add"``).

    ``side_effect`` tools ask the user unless the gate's ``auto_approve`` patterns match;
    ``always_confirm`` tools (the shell) ask every time. ``discrete`` marks an
    observe-before-commit tool: it is not bound in the REPL and is called with a ``call`` block.
    """

    name: str
    func: Callable[..., Any]
    description: str = ""
    side_effect: bool = False
    always_confirm: bool = False
    discrete: bool = False
    plugin: str = ""

    def __post_init__(self) -> None:
        module, _, fn = self.name.partition(".")
        if not (module.isidentifier() and fn.isidentifier()):
            raise PluginError(f"tool name {self.name!r} must be 'module.function'")

    @property
    def module(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def function(self) -> str:
        return self.name.split(".", 1)[1]

    def signature(self) -> str:
        try:
            return f"{self.name}{inspect.signature(self.func)}"
        except (TypeError, ValueError):
            return f"{self.name}(...)"

    def call(self) -> str:
        """The call as a prompt shows it: parameter names and defaults, no types
        (``todos.add(title, due=None, estimate_h=None)``)."""
        try:
            params = inspect.signature(self.func).parameters.values()
        except (TypeError, ValueError):
            return f"{self.name}(...)"
        return f"{self.name}({', '.join(_param(p) for p in params)})"


def _param(p: inspect.Parameter) -> str:
    star = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
    default = "" if p.default is p.empty else f"={p.default!r}"
    return f"{star}{p.name}{default}"


@dataclass
class ToolRegistry:
    """Tools by name plus one-line descriptions per module (what the router reads)."""

    tools: dict[str, ToolSpec] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self.tools and self.tools[spec.name].plugin != spec.plugin:
            raise PluginError(
                f"tool {spec.name!r} is already registered by plugin "
                f"{self.tools[spec.name].plugin!r}"
            )
        self.tools[spec.name] = spec

    def describe_module(self, module: str, description: str) -> None:
        self.modules[module] = description

    def get(self, name: str) -> ToolSpec | None:
        return self.tools.get(name)

    def names(self) -> list[str]:
        return sorted(self.tools)

    def descriptions(self, names: Sequence[str] | None = None) -> dict[str, str]:
        """``module -> description`` of the modules of ``names`` (default: every tool)."""
        wanted = {self.tools[n].module for n in (names if names is not None else self.tools)}
        return {
            m: self.modules.get(
                m, ", ".join(sorted(s.function for s in self.tools.values() if s.module == m))
            )
            for m in sorted(wanted)
        }

    def catalog(self, names: Sequence[str] | None = None) -> ToolCatalog:
        """What the prompts' ``{tools}`` show: the router each module's line, the agent also
        its functions' calls (see :class:`~macaron_local.hcp.schema.ToolCatalog`)."""
        from macaron_local.hcp.schema import ToolCatalog

        chosen = sorted(names if names is not None else self.tools)
        calls: dict[str, list[str]] = {}
        for name in chosen:
            calls.setdefault(self.tools[name].module, []).append(self.tools[name].call())
        return ToolCatalog(self.descriptions(chosen), calls)


@dataclass(frozen=True)
class ToolContext:
    """What tools see of the world: the workspace, the data folder and the clock."""

    workspace: Path
    data_dir: Path
    clock: Callable[[], datetime] = datetime.now

    def now(self) -> datetime:
        return self.clock()


_CONTEXT: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "macaron_tool_context", default=None
)


def default_context() -> ToolContext:
    return ToolContext(workspace=paths.data_dir() / "workspace", data_dir=paths.data_dir())


def tool_context() -> ToolContext:
    """The context of the tool call in progress (plugins call this inside their tools)."""
    return _CONTEXT.get() or default_context()


@contextlib.contextmanager
def use_context(ctx: ToolContext) -> Iterator[ToolContext]:
    token = _CONTEXT.set(ctx)
    try:
        yield ctx
    finally:
        _CONTEXT.reset(token)


def error_reply(exc: BaseException) -> dict[str, Any]:
    """The protocol message that re-raises ``exc`` (by builtin type name) in the child."""
    args = list(exc.args)
    try:
        json.dumps(args)
    except (TypeError, ValueError):
        args = [str(exc)]
    return {"op": "raise", "type": type(exc).__name__, "args": args, "message": str(exc)}


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class ToolGate:
    """Every tool call passes here: allowlist, confirmation, timeout, context."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        allow: Sequence[str],
        confirm: ConfirmFn | None = None,
        auto_approve: Sequence[str] = (),
        context: ToolContext | None = None,
        timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
    ) -> None:
        self.registry = registry
        self.allow = tuple(allow)
        self.confirm = confirm
        self.auto_approve = tuple(auto_approve)
        self.context = context
        self.timeout_s = timeout_s

    def allowed(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pat) for pat in self.allow)

    def visible(self, *, discrete: bool | None = None) -> list[ToolSpec]:
        """Allowed tools (only discrete / only REPL ones when ``discrete`` is given)."""
        return [
            s
            for n, s in sorted(self.registry.tools.items())
            if self.allowed(n) and (discrete is None or s.discrete == discrete)
        ]

    def namespace(self) -> dict[str, dict[str, str]]:
        """``module -> {function: doc}`` of the tools bound in the REPL."""
        out: dict[str, dict[str, str]] = {}
        for spec in self.visible(discrete=False):
            out.setdefault(spec.module, {})[spec.function] = spec.description
        return out

    def needs_confirmation(self, spec: ToolSpec) -> bool:
        if spec.always_confirm:
            return True
        return spec.side_effect and not any(
            fnmatch.fnmatchcase(spec.name, p) for p in self.auto_approve
        )

    def call(
        self, name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        """Run tool ``name``; raises what the tool raised, PermissionError or TimeoutError."""
        kwargs = kwargs or {}
        spec = self.registry.get(name)
        if spec is None or not self.allowed(name):
            raise PermissionError(f"tool {name} is not available to the agent")
        bound = _bind(spec, args, kwargs)
        if self.needs_confirmation(spec) and not self._confirmed(spec, bound):
            raise PermissionError(f"the user declined to run: {_what(spec, bound)}")
        return _plain(self._run(spec, args, kwargs))

    def answer(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """``call`` as a protocol reply (the REPL child re-raises errors)."""
        try:
            return {"op": "return", "value": self.call(name, args, kwargs)}
        except PluginError as exc:
            return error_reply(TimeoutError(str(exc)))
        except Exception as exc:  # any tool error goes back to the model
            return error_reply(exc)

    def _confirmed(self, spec: ToolSpec, bound: dict[str, Any]) -> bool:
        if self.confirm is None:
            return False
        return bool(self.confirm(spec.name, bound))

    def _run(self, spec: ToolSpec, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        box: dict[str, Any] = {}
        ctx = self.context or tool_context()

        def target() -> None:
            try:
                with use_context(ctx):
                    box["value"] = spec.func(*args, **kwargs)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=target, daemon=True, name=f"tool-{spec.name}")
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            raise PluginError(
                f"tool {spec.name} (plugin {spec.plugin or '?'}) did not answer "
                f"within {self.timeout_s:g}s"
            )
        if "error" in box:
            raise box["error"]
        return box.get("value")


def _bind(spec: ToolSpec, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        sig = inspect.signature(spec.func)
    except (TypeError, ValueError):
        return {"args": list(args), **kwargs}
    try:
        return dict(sig.bind(*args, **kwargs).arguments)
    except TypeError as exc:
        raise TypeError(f"{spec.name}(): {exc}") from None


def _what(spec: ToolSpec, bound: dict[str, Any]) -> str:
    if len(bound) == 1:
        (value,) = bound.values()
        if isinstance(value, str):
            return value if spec.name == "shell.run" else f"{spec.name}({value!r})"
    return f"{spec.name}({', '.join(f'{k}={v!r}' for k, v in bound.items())})"
