"""Compile a component catalogue to the GBNF grammar that L3 answers are decoded under.

Owns the grammar text. An answer decoded under it is either plain text (no backticks, so no
fence) or one optional plain line followed by exactly one ```` ```ui ```` block holding one-line
JSON in the trained form (``json.dumps`` separators, keys in canonical order, known types,
required props, no unknown props, enum values, minimum list lengths). Rules that span fields
(unique ids, ``min <= value <= max``, row widths) are left to the catalogue's validator. It
must not call llama.cpp except through :func:`validate_gbnf` in :func:`ui_grammar`.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Sequence
from typing import Any, Literal

from pydantic.fields import FieldInfo

from macaron_local.genui.catalogue import (
    ACTION,
    KEY_LAST,
    KEY_ORDER,
    Catalogue,
    Component,
    Tab,
    default_catalogue,
)

# Key orders the training data also uses for a type's non-canonical props (docs/formats.md
# fixes only the first keys; models/data keeps the seed's order for the rest).
ALT_ORDERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "input": (("value", "unit", "placeholder"),),
}
BASE_RULES = r"""
string ::= "\"" char* "\""
text ::= "\"" char+ "\""
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
ident ::= "\"" [a-z0-9_]{1,48} "\""
integer ::= "-"? ("0" | [1-9] [0-9]{0,11})
number ::= integer ("." [0-9]{1,8})?
boolean ::= "true" | "false"
"""


def _lit(text: str) -> str:
    """A GBNF literal for ``text``."""
    return json.dumps(text, ensure_ascii=False)


class _Builder:
    """Collects rules while walking the catalogue's models."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.cat = catalogue
        self.rules: dict[str, str] = {}
        self._alts: dict[str, str] = {}  # inline alternation -> its rule name

    def add(self, name: str, body: str) -> str:
        self.rules.setdefault(name, body)
        return name

    def array(self, item: str, min_items: int) -> str:
        if not re.fullmatch(r"[a-z0-9-]+", item):  # an inline alternation becomes a rule
            item = (
                self.add(f"alt-{len(self.rules)}", item)
                if item not in self._alts
                else self._alts[item]
            )
            self._alts.setdefault(self.rules[item], item)
        name = f"arr-{item}-{min_items}"
        sep = _lit(", ")
        head = f" {sep} ".join([item] * max(min_items, 1))
        tail = f"({sep} {item})*"
        body = f'"[" {head} {tail} "]"'
        if min_items == 0:
            body = f'"[" ({head} {tail})? "]"'
        return self.add(name, body)

    def value(self, ann: Any, meta: list[Any], key: str, owner: str) -> str:
        """The rule (or inline alternation) for one prop's value."""
        if key == "action":
            return "action"
        if key == "id":
            return "ident"
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            inner, *extra = typing.get_args(ann)
            return self.value(inner, meta + list(extra), key, owner)
        if origin in (typing.Union, types.UnionType):
            opts = [a for a in typing.get_args(ann) if a is not type(None)]
            alts = list(dict.fromkeys(self.value(a, meta, key, owner) for a in opts))
            if "number" in alts and "integer" in alts:  # a number already covers integers
                alts.remove("integer")
            return alts[0] if len(alts) == 1 else "(" + " | ".join(alts) + ")"
        if origin is Literal:
            return "(" + " | ".join(_lit(json.dumps(a)) for a in typing.get_args(ann)) + ")"
        if origin is list:
            (item,) = typing.get_args(ann)
            n = _min_length(meta)
            return self.array(self.value(item, [], f"{key}[]", owner), n)
        return self._scalar(ann, meta, key, owner)

    def _scalar(self, ann: Any, meta: list[Any], key: str, owner: str) -> str:
        if ann is bool:
            return "boolean"
        if ann is int:
            return "integer"
        if ann is float:
            return "number"
        if ann is str:
            return "text" if _min_length(meta) else "string"
        if isinstance(ann, type) and issubclass(ann, Tab):
            return self.tab()
        if isinstance(ann, type) and issubclass(ann, Component):
            return "field" if owner == "form" and key == "fields[]" else "comp"
        raise TypeError(f"no grammar for {owner}.{key}: {ann!r}")

    def tab(self) -> str:
        comps = self.array("comp", 1)
        body = (
            f'"{{" {_lit(chr(34) + "label" + chr(34) + ": ")} string '
            f'{_lit(", " + chr(34) + "components" + chr(34) + ": ")} {comps} "}}"'
        )
        return self.add("tab", body)

    def component(self, type_name: str, model: type[Component]) -> str:
        """``comp-<type>``: the object with keys in canonical order (or a trained variant)."""
        fields = {(f.alias or n): f for n, f in model.model_fields.items()}
        head = [k for k in KEY_ORDER if k in fields and k != "type"]
        rest = [k for k in fields if k not in KEY_ORDER and k not in KEY_LAST]
        tail = [k for k in KEY_LAST if k in fields]
        orders = [rest] + [list(o) for o in ALT_ORDERS.get(type_name, ()) if set(o) == set(rest)]
        body = [_lit('{"type": ' + json.dumps(type_name))]
        body += [self._prop(type_name, key, fields[key]) for key in head]
        alts = [" ".join(self._prop(type_name, k, fields[k]) for k in order) for order in orders]
        body.append(alts[0] if len(alts) == 1 else "(" + " | ".join(f"({a})" for a in alts) + ")")
        body += [self._prop(type_name, key, fields[key]) for key in tail]
        body.append('"}"')
        return self.add(f"comp-{type_name.replace('_', '-')}", " ".join(b for b in body if b))

    def _prop(self, owner: str, key: str, info: FieldInfo) -> str:
        rule = self.value(info.annotation, list(info.metadata), key, owner)
        piece = f"{_lit(', ' + json.dumps(key) + ': ')} {rule}"
        return piece if _required(info) else f"({piece})?"


def _required(info: FieldInfo) -> bool:
    return info.is_required()


def _min_length(meta: list[Any]) -> int:
    for m in meta:
        n = getattr(m, "min_length", None)
        if isinstance(n, int):
            return n
    return 0


ANY_TOOL = '"\\"tool:" [a-z_] [a-z0-9_]{0,31} "." [a-z_] [a-z0-9_]{0,31} "\\""'


def _action_rule(tools: Sequence[str] | None) -> str:
    """``send``, ``reset`` and ``tool:<name>``: any well-formed name, or only ``tools``."""
    alts = [_lit('"send"'), _lit('"reset"')]
    if tools is None:
        alts.append(ANY_TOOL)
    else:
        alts += [
            _lit(json.dumps(f"tool:{t}")) for t in sorted(set(tools)) if ACTION.match(f"tool:{t}")
        ]
    return " | ".join(alts)


def catalogue_gbnf(
    catalogue: Catalogue | None = None,
    *,
    allow_plain: bool = True,
    tools: Sequence[str] | None = None,
) -> str:
    """The GBNF text for L3 answers over ``catalogue`` (built-ins when None); with ``tools``,
    ``tool:`` actions may name only those tools (the allowlisted ones)."""
    cat = catalogue or default_catalogue()
    b = _Builder(cat)
    names = {t: b.component(t, m) for t, m in sorted(cat.models.items())}
    b.rules["comp"] = " | ".join(names.values())
    fields = [names[t] for t, m in sorted(cat.models.items()) if m.FIELD]
    b.rules["field"] = " | ".join(fields)
    comps = b.array("comp", 1)
    ids = b.array("ident", 0)
    vis = f'({_lit(", " + chr(34) + "visibility" + chr(34) + ": {" + chr(34) + "noai" + chr(34) + ": ")} {ids} "}}")?'  # noqa: E501
    doc = (
        f"{_lit('{' + chr(34) + 'title' + chr(34) + ': ')} text "
        f'{_lit(", " + chr(34) + "components" + chr(34) + ": ")} {comps} {vis} "}}"'
    )
    b.rules["doc"] = doc
    ui = '(lead)? "```ui\\n" doc "\\n```"'
    root = f"{ui} | plain" if allow_plain else ui
    lines = [f"root ::= {root}", 'lead ::= [^`\\n]+ "\\n"', "plain ::= [^`]+"]
    lines += [f"{k} ::= {v}" for k, v in b.rules.items()]
    lines.append(f"action ::= {_action_rule(tools)}")
    return "\n".join(lines) + "\n" + BASE_RULES.strip() + "\n"


def ui_grammar(
    catalogue: Catalogue | None = None,
    *,
    allow_plain: bool = True,
    tools: Sequence[str] | None = None,
    validate: bool = True,
) -> str:
    """:func:`catalogue_gbnf`, checked by llama.cpp's own parser (GrammarError if refused)."""
    text = catalogue_gbnf(catalogue, allow_plain=allow_plain, tools=tools)
    if validate:
        from macaron_local.engine.grammar import validate_gbnf

        validate_gbnf(text)
    return text


__all__ = ["ACTION", "catalogue_gbnf", "ui_grammar"]
