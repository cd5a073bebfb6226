"""Plugin components: turning a ``register_components`` spec into a catalogue model.

A plugin registers a component with ``register(type_name, spec)`` (the hook in
``macaron_local.plugins.hookspecs``). ``spec`` is a plain dict::

    {"description": "a star rating",
     "props": {"label": "string", "stars": "integer", "value": "integer"},
     "required": ["label", "stars"],
     "value": "value",          # optional: the prop that holds the bound state
     "field": True}             # optional: may appear in a form's fields

Prop kinds: ``string``, ``markdown``, ``number``, ``integer``, ``boolean``, ``strings``,
``numbers``. Owns the spec check and the model; it must not load plugins (the plugin manager
does) nor render (plugin components render generically: label, props and bound value).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, create_model

from macaron_local.errors import MacaronError, PluginError
from macaron_local.genui.catalogue import Catalogue, Component, Number

PROP_KINDS: dict[str, Any] = {
    "string": StrictStr,
    "markdown": StrictStr,
    "number": Number,
    "integer": StrictInt,
    "boolean": StrictBool,
    "strings": list[StrictStr],
    "numbers": list[Number],
}
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
RESERVED = {"type", "id", "noai"}


class ComponentSpec(BaseModel):
    """A plugin component's spec, checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    description: str = ""
    props: dict[
        str, Literal["string", "markdown", "number", "integer", "boolean", "strings", "numbers"]
    ] = Field(min_length=1)
    required: list[str] = []
    value: str | None = None
    field: bool = False


class PluginComponent(Component):
    """Base of plugin-defined components (``SPEC`` and ``STATE_PROP`` set per model)."""

    SPEC: ClassVar[ComponentSpec | None] = None
    STATE_PROP: ClassVar[str | None] = None

    def initial_state(self) -> Any:
        return getattr(self, self.STATE_PROP) if self.STATE_PROP else None

    def props(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump(exclude={"type", "id"}).items() if v is not None}


def check_spec(type_name: str, spec: dict[str, Any]) -> ComponentSpec:
    """Validate a spec; PluginError says what is wrong."""
    if not NAME.match(type_name):
        raise PluginError(f"component type {type_name!r} must be a lowercase snake_case name")
    try:
        checked = ComponentSpec.model_validate(spec)
    except ValueError as exc:
        raise PluginError(f"component {type_name!r}: bad spec: {exc}") from None
    names = set(checked.props)
    if names & RESERVED or not all(NAME.match(n) for n in names):
        raise PluginError(
            f"component {type_name!r}: prop names must be snake_case and not {sorted(RESERVED)}"
        )
    missing = set(checked.required) - names
    if missing or (checked.value is not None and checked.value not in names):
        raise PluginError(
            f"component {type_name!r}: unknown props {sorted(missing)} "
            f"or value prop {checked.value!r}"
        )
    return checked


def component_model(type_name: str, spec: dict[str, Any]) -> type[PluginComponent]:
    """A pydantic component model for a plugin spec."""
    checked = check_spec(type_name, spec)
    fields: dict[str, Any] = {"type": (Literal[type_name], ...)}
    for name, kind in checked.props.items():
        ann = PROP_KINDS[kind]
        fields[name] = (ann, ...) if name in checked.required else (ann | None, None)
    model = create_model(f"Plugin_{type_name}", __base__=PluginComponent, **fields)
    model.SPEC = checked
    model.STATE_PROP = checked.value
    model.STATE = f"the {checked.value}" if checked.value else None
    model.FIELD = checked.field
    return model


def with_plugins(
    components: dict[str, dict[str, Any]], base: Catalogue | None = None
) -> tuple[Catalogue, list[str]]:
    """A catalogue of the built-ins plus plugin components; a warning per rejected one."""
    cat = Catalogue(dict(base.models) if base else None)
    warnings: list[str] = []
    for name, spec in sorted(components.items()):
        try:
            cat.add(component_model(name, spec))
        except (MacaronError, ValueError) as exc:
            warnings.append(str(exc))
    return cat, warnings


def plugin_catalogue(manager: Any | None = None) -> tuple[Catalogue, list[str]]:
    """The catalogue with every enabled plugin's components (loads plugins if not given)."""
    if manager is None:
        from macaron_local.plugins.manager import PluginManager

        manager = PluginManager()
        manager.load()
    return with_plugins(manager.components())
