"""Actions on a generated UI: live state, the four-field Action, and where each one goes.

Every gesture becomes an :class:`Action` with Origin (component id and gesture), State (the
bound values it carries), Execution (``local`` update, ``tool`` call or ``model`` turn) and
Visibility (which of those values a model may see). This module is the one place where an
action becomes text or tool arguments, and it enforces **NoAI** there: a value whose component
is marked ``noai`` (or named by the document's visibility rule) never enters the next turn's
text, and so never reaches a model prompt, a stored turn, a summary or an experience record.
It is not passed to tools either: the agent's tools keep data (notes, files) that the model can
read back later. It must not render (the TUI does) nor run turns itself (the ``ActionHost``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from macaron_local.errors import ContractError
from macaron_local.genui.catalogue import Button, Component, Document, Form

Gesture = Literal["change", "click", "submit", "sort", "filter", "select_tab", "check"]
ExecutionKind = Literal["local", "tool", "model"]
PRIVATE = "(private, not shared)"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Origin(_Frozen):
    component_id: str
    gesture: Gesture


class Execution(_Frozen):
    kind: ExecutionKind
    tool: str | None = None  # ``module.function`` when kind == "tool"
    reset: bool = False  # a local action that restores the initial values


class ActionVisibility(_Frozen):
    model: tuple[str, ...]  # ids whose values a model may see
    noai: tuple[str, ...]  # ids whose values no model may see


class Action(_Frozen):
    origin: Origin
    state: dict[str, Any]
    execution: Execution
    visibility: ActionVisibility


class UiState:
    """The live values of one document, keyed by component id (mutable; UI thread only)."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.initial = document.initial_state()
        self.values: dict[str, Any] = dict(self.initial)

    def set(self, component_id: str, value: Any) -> None:
        if component_id not in self.initial:
            raise ContractError(f"component {component_id!r} binds no value", where="ui state")
        self.values[component_id] = value

    def get(self, component_id: str) -> Any:
        return self.values[component_id]

    def reset(self, ids: list[str] | None = None) -> None:
        for key in ids if ids is not None else list(self.initial):
            self.values[key] = self.initial[key]

    def snapshot(self) -> dict[str, Any]:
        return {k: _copy(v) for k, v in self.values.items()}


def _copy(value: Any) -> Any:
    return (
        list(value)
        if isinstance(value, list)
        else dict(value)
        if isinstance(value, dict)
        else value
    )


def _execution(spec: str) -> Execution:
    if spec == "send":
        return Execution(kind="model")
    if spec == "reset":
        return Execution(kind="local", reset=True)
    return Execution(kind="tool", tool=spec.removeprefix("tool:"))


def _scope(doc: Document, comp: Component) -> list[str]:
    """The ids whose values an action from ``comp`` carries."""
    binds = doc.initial_state()
    if isinstance(comp, Form):
        return [f.id for f in comp.fields if f.id in binds]
    if isinstance(comp, Button):
        return [i for i in binds if _is_input(doc.get(i))]
    return [comp.id] if comp.id in binds else []


def _is_input(comp: Component) -> bool:
    return comp.FIELD


def make_action(doc: Document, state: UiState, component_id: str, gesture: Gesture) -> Action:
    """The Action for ``gesture`` on ``component_id`` with the current state."""
    comp = doc.get(component_id)
    if isinstance(comp, Button | Form) and gesture in ("click", "submit"):
        execution = _execution(comp.action)
    else:
        execution = Execution(kind="local")
    ids = _scope(doc, comp)
    hidden = doc.noai_ids()
    return Action(
        origin=Origin(component_id=component_id, gesture=gesture),
        state={i: _copy(state.values[i]) for i in ids},
        execution=execution,
        visibility=ActionVisibility(
            model=tuple(i for i in ids if i not in hidden),
            noai=tuple(i for i in ids if i in hidden),
        ),
    )


def visible_values(action: Action, doc: Document) -> dict[str, Any]:
    """The values a model may see: NoAI ids are dropped (by the document and the action)."""
    hidden = doc.noai_ids() | set(action.visibility.noai)
    return {
        k: v for k, v in action.state.items() if k in action.visibility.model and k not in hidden
    }


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    return "(empty)" if value is None or value == "" else str(value)


def _line(doc: Document, key: str, value: Any) -> str:
    comp = doc.get(key)
    unit = getattr(comp, "unit", None)
    return f"- {comp.caption()}: {_show(value)}" + (f" {unit}" if unit and value else "")


def turn_text(action: Action, doc: Document) -> str:
    """The next turn's text for a ``model`` action: title, what was pressed, visible values."""
    comp = doc.get(action.origin.component_id)
    pressed = comp.submit if isinstance(comp, Form) else comp.caption()
    lines = [f"[ui] {doc.title}: {pressed}"]
    lines += [_line(doc, k, v) for k, v in visible_values(action, doc).items()]
    withheld = len(action.state) - len(visible_values(action, doc))
    if withheld:
        lines.append(f"- {withheld} private field(s) {PRIVATE}")
    return "\n".join(lines)


def tool_kwargs(func: Callable[..., Any], action: Action, doc: Document) -> dict[str, Any]:
    """Arguments for a ``tool`` action: fields named like parameters fill them; the first
    required text parameter left over gets the visible values as ``Label: value`` lines."""
    values = visible_values(action, doc)
    params = inspect.signature(func).parameters
    kwargs = {k: v for k, v in values.items() if k in params}
    rest = [
        p
        for p in params.values()
        if p.name not in kwargs
        and p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if rest:
        body = [f"{doc.get(k).caption()}: {_show(v)}" for k, v in values.items() if k not in kwargs]
        kwargs[rest[0].name] = f"{doc.title}\n" + "\n".join(body)
    return kwargs


class ActionHost(Protocol):
    """Where non-local actions go (the runtime, or a test double)."""

    def tool_function(self, name: str) -> Callable[..., Any]: ...
    def call_tool(self, name: str, kwargs: dict[str, Any]) -> Any: ...
    def send_turn(self, text: str) -> Any: ...


@dataclass(frozen=True)
class Outcome:
    """What an executed action did: ``value`` is the tool result or the new turn."""

    kind: ExecutionKind
    value: Any = None
    text: str = ""


def execute(action: Action, doc: Document, state: UiState, host: ActionHost | None) -> Outcome:
    """Run ``action``: local updates here; tools and model turns through ``host``."""
    ex = action.execution
    if ex.kind == "local":
        if ex.reset:
            state.reset()
        return Outcome("local")
    if host is None:
        raise ContractError(f"a {ex.kind} action needs the runtime", where="ui action")
    if ex.kind == "tool":
        name = ex.tool or ""
        kwargs = tool_kwargs(host.tool_function(name), action, doc)
        return Outcome("tool", host.call_tool(name, kwargs), text=name)
    text = turn_text(action, doc)
    return Outcome("model", host.send_turn(text), text=text)
