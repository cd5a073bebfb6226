"""The GenUI component catalogue: pydantic models for "L3 UI document, v0" plus its extensions.

Owns the component models (one per ``type``), the :class:`Document` that holds them, the
:class:`Catalogue` that maps a type name to its model (built-ins plus plugin components) and
parsing/validation of documents. Every v0 document in docs/formats.md validates unchanged; the
extensions are optional: ``stepper``, ``noai`` on field components, and a document-level
``visibility`` rule. It must not render anything (``tui/widgets/genui.py``, ``html.py``) nor
build grammars (``grammar.py``).

Every component has ``type`` and ``id``; its other fields are its props. A component whose
``STATE`` is not None binds a live value (keyed by its id) whose initial value comes from its
props (``initial_state``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from macaron_local.errors import ContractError

ACTION = re.compile(r"^(send|reset|tool:[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)$")
KEY_ORDER = ("type", "id", "title", "label", "kind", "mode", "text")
KEY_LAST = ("noai",)  # extension props go after the v0 ones
Number = StrictInt | StrictFloat
Cell = StrictStr | StrictInt | StrictFloat
NonEmpty = Field(min_length=1)


class Component(BaseModel):
    """A catalogue entry. Subclasses set ``type`` (a Literal) and ``STATE`` (bound value)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    STATE: ClassVar[str | None] = None  # what the bound value is, in words; None: no binding
    FIELD: ClassVar[bool] = False  # may appear in a form's ``fields``

    type: str
    id: StrictStr = NonEmpty

    def children(self) -> list[Component]:
        """Nested components (cards, tabs, forms)."""
        return []

    def initial_state(self) -> Any:
        """The bound value before any gesture (None when the component binds nothing)."""
        return None

    @property
    def binds(self) -> bool:
        """Whether this component holds a live value (keyed by its id)."""
        return self.STATE is not None

    @property
    def noai(self) -> bool:
        return bool(getattr(self, "noai_flag", False))

    def caption(self) -> str:
        """The words a person would use for this component (label, title or id)."""
        for key in ("label", "title"):
            value = getattr(self, key, None)
            if isinstance(value, str) and value:
                return value
        return self.id


def _nested(value: Any, info: ValidationInfo) -> Any:
    """Parse nested component dicts with the catalogue in the validation context."""
    cat = (info.context or {}).get("catalogue") or default_catalogue()
    if not isinstance(value, list):
        return value
    return [cat.component(v) if isinstance(v, dict) else v for v in value]


class Card(Component):
    type: Literal["card"]
    title: StrictStr = NonEmpty
    text: StrictStr | None = None
    components: list[SerializeAsAny[Component]] | None = None

    _parse = field_validator("components", mode="before")(_nested)

    def children(self) -> list[Component]:
        return list(self.components or [])


class Text(Component):
    type: Literal["text"]
    text: StrictStr


class FieldComponent(Component):
    """A component a form may hold; ``noai: true`` keeps its value out of every model context."""

    FIELD: ClassVar[bool] = True
    noai_flag: StrictBool = Field(False, alias="noai")
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)


class Choice(FieldComponent):
    STATE: ClassVar[str | None] = "the chosen option (single) or options (multiple)"
    type: Literal["choice"]
    label: StrictStr
    mode: Literal["single", "multiple"]
    options: list[StrictStr] = Field(min_length=2)
    value: StrictStr | list[StrictStr] | None = None

    @model_validator(mode="after")
    def _check(self) -> Choice:
        if any(not o for o in self.options):
            raise ValueError("options must be non-empty strings")
        chosen = [self.value] if isinstance(self.value, str) else (self.value or [])
        if any(v not in self.options for v in chosen):
            raise ValueError("value must be one of the options")
        if self.mode == "single" and isinstance(self.value, list):
            raise ValueError("a single choice has one value")
        return self

    def initial_state(self) -> Any:
        if self.mode == "multiple":
            return [self.value] if isinstance(self.value, str) else list(self.value or [])
        return self.value


class Input(FieldComponent):
    STATE: ClassVar[str | None] = "the typed text, number or ISO date"
    type: Literal["input"]
    label: StrictStr
    kind: Literal["text", "number", "date"]
    unit: StrictStr | None = None
    value: Cell | None = None
    placeholder: StrictStr | None = None

    def initial_state(self) -> Any:
        return self.value


class Toggle(FieldComponent):
    STATE: ClassVar[str | None] = "on or off"
    type: Literal["toggle"]
    label: StrictStr
    value: StrictBool | None = None

    def initial_state(self) -> Any:
        return bool(self.value)


class _Range(FieldComponent):
    STATE: ClassVar[str | None] = "the number"
    label: StrictStr
    min: Number
    max: Number
    step: Number
    value: Number
    unit: StrictStr | None = None

    @model_validator(mode="after")
    def _check(self) -> _Range:
        if not (self.min < self.max and self.step > 0 and self.min <= self.value <= self.max):
            raise ValueError("needs min < max, step > 0 and min <= value <= max")
        return self

    def initial_state(self) -> Any:
        return self.value


class Slider(_Range):
    type: Literal["slider"]


class Stepper(_Range):
    """Extension: a number changed by +/- ``step`` (same props as a slider)."""

    type: Literal["stepper"]


class Button(Component):
    type: Literal["button"]
    label: StrictStr
    action: StrictStr = Field(pattern=ACTION.pattern)


class Table(Component):
    STATE: ClassVar[str | None] = "the sort column/direction and the filter text"
    type: Literal["table"]
    columns: list[StrictStr] = Field(min_length=1)
    rows: list[list[Cell]] = Field(min_length=1)
    sortable: StrictBool | None = None
    filterable: StrictBool | None = None

    @model_validator(mode="after")
    def _check(self) -> Table:
        if any(len(r) != len(self.columns) for r in self.rows):
            raise ValueError("every row needs one cell per column")
        return self

    def initial_state(self) -> Any:
        return {"sort": None, "descending": False, "filter": ""}


class ListComponent(Component):
    STATE: ClassVar[str | None] = "the indexes of the checked items"
    type: Literal["list"]
    ordered: StrictBool | None = None
    checkable: StrictBool | None = None
    items: list[StrictStr] = Field(min_length=1)

    def initial_state(self) -> Any:
        return [] if self.checkable else None

    @property
    def binds(self) -> bool:
        return bool(self.checkable)


class Tab(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    label: StrictStr
    components: list[SerializeAsAny[Component]]

    _parse = field_validator("components", mode="before")(_nested)


class Tabs(Component):
    STATE: ClassVar[str | None] = "the index of the open tab"
    type: Literal["tabs"]
    tabs: list[Tab] = Field(min_length=2)

    def children(self) -> list[Component]:
        return [c for t in self.tabs for c in t.components]

    def initial_state(self) -> Any:
        return 0


class Progress(Component):
    type: Literal["progress"]
    label: StrictStr | None = None
    value: Number = Field(ge=0, le=1)


class Chart(Component):
    type: Literal["chart"]
    title: StrictStr | None = None
    kind: Literal["bar", "line"]
    labels: list[StrictStr] = Field(min_length=2)
    values: list[Number] = Field(min_length=2)
    unit: StrictStr | None = None

    @model_validator(mode="after")
    def _check(self) -> Chart:
        if len(self.labels) != len(self.values):
            raise ValueError("labels and values differ in length")
        return self


class Form(Component):
    type: Literal["form"]
    fields: list[SerializeAsAny[Component]] = Field(min_length=1)
    submit: StrictStr = NonEmpty
    action: StrictStr = Field("send", pattern=ACTION.pattern)

    _parse = field_validator("fields", mode="before")(_nested)

    @model_validator(mode="after")
    def _check(self) -> Form:
        bad = [f.id for f in self.fields if not f.FIELD]
        if bad:
            raise ValueError(f"form fields must be input, choice, toggle, slider or stepper: {bad}")
        return self

    def children(self) -> list[Component]:
        return list(self.fields)


BUILTINS: tuple[type[Component], ...] = (
    Card,
    Text,
    Choice,
    Input,
    Toggle,
    Slider,
    Stepper,
    Button,
    Table,
    ListComponent,
    Tabs,
    Progress,
    Chart,
    Form,
)


class Visibility(BaseModel):
    """Extension: document-level rule; ``noai`` ids are never shown to any model."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    noai: list[StrictStr] = []


class Document(BaseModel):
    """``{"title", "components"}`` (v0) plus the optional ``visibility`` rule."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    title: StrictStr = NonEmpty
    components: list[SerializeAsAny[Component]] = Field(min_length=1)
    visibility: Visibility | None = None

    _parse = field_validator("components", mode="before")(_nested)

    @model_validator(mode="after")
    def _unique(self) -> Document:
        ids = [c.id for c in self.walk()]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate component ids {dup}")
        return self

    def walk(self) -> Iterator[Component]:
        """Every component, depth first, containers before their children."""
        yield from _walk(self.components)

    def get(self, component_id: str) -> Component:
        for c in self.walk():
            if c.id == component_id:
                return c
        raise KeyError(component_id)

    def noai_ids(self) -> frozenset[str]:
        """Ids whose values no model may see: ``noai`` props plus the visibility rule."""
        marked = {c.id for c in self.walk() if c.noai}
        return frozenset(marked | set(self.visibility.noai if self.visibility else ()))

    def initial_state(self) -> dict[str, Any]:
        return {c.id: c.initial_state() for c in self.walk() if c.binds}

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump(
            mode="json",
            by_alias=True,
            exclude_none=True,
            exclude_defaults=False,
            exclude_unset=True,
        )
        out: dict[str, Any] = {
            "title": data["title"],
            "components": [_ordered(c) for c in data["components"]],
        }
        if "visibility" in data:
            out["visibility"] = data["visibility"]
        return out

    def to_json(self) -> str:
        """The one-line JSON the adapter is trained to emit (keys in canonical order)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _walk(components: list[Component]) -> Iterator[Component]:
    for c in components:
        yield c
        yield from _walk(c.children())


def _ordered(comp: dict[str, Any]) -> dict[str, Any]:
    keys = [k for k in KEY_ORDER if k in comp]
    keys += [k for k in comp if k not in KEY_ORDER and k not in KEY_LAST]
    keys += [k for k in KEY_LAST if k in comp]
    out: dict[str, Any] = {}
    for key in keys:
        value = comp[key]
        if key in ("components", "fields"):
            value = [_ordered(c) for c in value]
        elif key == "tabs":
            value = [
                {"label": t["label"], "components": [_ordered(c) for c in t["components"]]}
                for t in value
            ]
        out[key] = value
    return out


class Catalogue:
    """Type name -> component model; built-ins plus components registered by plugins."""

    def __init__(self, models: Mapping[str, type[Component]] | None = None) -> None:
        self.models: dict[str, type[Component]] = dict(models or _builtin_models())

    def add(self, model: type[Component]) -> None:
        name = _type_name(model)
        if name in self.models:
            raise ContractError(f"component type {name!r} is already in the catalogue")
        self.models[name] = model

    def component(self, data: dict[str, Any]) -> Component:
        """Validate one component dict (and its children); ValueError names the problem."""
        kind = data.get("type")
        model = self.models.get(kind) if isinstance(kind, str) else None
        if model is None:
            raise ValueError(f"unknown component type {kind!r}")
        return model.model_validate(data, context={"catalogue": self})

    def document(self, data: Any, *, where: str = "ui document") -> Document:
        """Validate a parsed document; :class:`ContractError` says which field is wrong."""
        try:
            return Document.model_validate(data, context={"catalogue": self})
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise ContractError(err["msg"], where=f"{where}: {loc}" if loc else where) from None

    def parse(self, text: str) -> Document:
        """Parse the JSON of a ``ui`` block."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ContractError(f"the ui block is not JSON: {exc}", where="ui document") from None
        return self.document(data)


def _type_name(model: type[Component]) -> str:
    args = get_args(model.model_fields["type"].annotation)
    if len(args) != 1 or not isinstance(args[0], str):
        raise ContractError(f"{model.__name__}.type must be a Literal of one name")
    return str(args[0])


def _builtin_models() -> dict[str, type[Component]]:
    return {_type_name(m): m for m in BUILTINS}


def default_catalogue() -> Catalogue:
    """A fresh catalogue of the built-in components."""
    return Catalogue()
