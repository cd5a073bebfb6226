"""The checker for "L3 UI document, v0" (docs/formats.md) used by the data build.

Owns: filling in missing component ids in seed documents, putting keys in canonical order,
and validating a document. It must not render anything; the GenUI engineer turns this
format into pydantic models and a grammar. Stdlib only.
"""

from __future__ import annotations

import json
import re
from typing import Any

ACTION = re.compile(r"^(send|reset|tool:[a-z_]+\.[a-z_]+)$")
INPUT_KINDS = {"text", "number", "date"}
FIELD_TYPES = {"input", "choice", "toggle", "slider"}
# type -> (required props, optional props)
PROPS: dict[str, tuple[set[str], set[str]]] = {
    "card": ({"title"}, {"text", "components"}),
    "text": ({"text"}, set()),
    "choice": ({"label", "mode", "options"}, {"value"}),
    "input": ({"kind", "label"}, {"value", "placeholder", "unit"}),
    "toggle": ({"label"}, {"value"}),
    "slider": ({"label", "min", "max", "step", "value"}, {"unit"}),
    "button": ({"label", "action"}, set()),
    "table": ({"columns", "rows"}, {"sortable", "filterable"}),
    "list": ({"items"}, {"ordered", "checkable"}),
    "tabs": ({"tabs"}, set()),
    "progress": ({"value"}, {"label"}),
    "chart": ({"kind", "labels", "values"}, {"title", "unit"}),
    "form": ({"fields", "submit"}, {"action"}),
}
KEY_ORDER = ("type", "id", "title", "label", "kind", "mode", "text")


class UIDocError(ValueError):
    """A UI document that breaks the v0 format."""


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:3]
    return "_".join(words) or "c"


def _children(comp: dict[str, Any]) -> list[dict[str, Any]]:
    kids = list(comp.get("components", [])) + list(comp.get("fields", []))
    for tab in comp.get("tabs", []):
        kids.extend(tab.get("components", []))
    return kids


def _walk(components: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for comp in components:
        out.append(comp)
        out.extend(_walk(_children(comp)))
    return out


def fill_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """Give every component without an id one made from its label/title/type, unique."""
    comps = _walk(doc.get("components", []))
    taken = {c["id"] for c in comps if "id" in c}
    for comp in comps:
        if "id" in comp:
            continue
        base = _slug(str(comp.get("label") or comp.get("title") or comp.get("type", "c")))
        cand, n = base, 2
        while cand in taken:
            cand, n = f"{base}_{n}", n + 1
        comp["id"] = cand
        taken.add(cand)
    return doc


def _ordered(comp: dict[str, Any]) -> dict[str, Any]:
    keys = [k for k in KEY_ORDER if k in comp] + [k for k in comp if k not in KEY_ORDER]
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


def canonical(doc: dict[str, Any]) -> str:
    """The document as the one-line JSON the adapter is trained to emit."""
    body = {"title": doc["title"], "components": [_ordered(c) for c in doc["components"]]}
    return json.dumps(body, ensure_ascii=False)


def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise UIDocError(f"{where}: {msg}")


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_props(comp: dict[str, Any], where: str) -> None:
    kind = comp["type"]
    if kind == "choice":
        _need(comp["mode"] in ("single", "multiple"), where, "mode must be single|multiple")
        opts = comp["options"]
        _need(isinstance(opts, list) and len(opts) >= 2, where, "choice needs >= 2 options")
        _need(all(isinstance(o, str) and o for o in opts), where, "options must be strings")
    elif kind == "input":
        _need(comp["kind"] in INPUT_KINDS, where, "input kind must be text|number|date")
    elif kind == "slider":
        lo, hi, step, val = (comp[k] for k in ("min", "max", "step", "value"))
        _need(all(_is_num(x) for x in (lo, hi, step, val)), where, "slider props must be numbers")
        _need(lo < hi and step > 0 and lo <= val <= hi, where, "slider needs min<=value<=max")
    elif kind == "button":
        _need(bool(ACTION.match(str(comp["action"]))), where, f"bad action {comp['action']!r}")
    elif kind == "table":
        cols, rows = comp["columns"], comp["rows"]
        _need(len(cols) >= 1 and len(rows) >= 1, where, "table needs columns and rows")
        _need(all(len(r) == len(cols) for r in rows), where, "row width != columns")
    elif kind == "list":
        _need(len(comp["items"]) >= 1, where, "list needs items")
    elif kind == "progress":
        _need(_is_num(comp["value"]) and 0 <= comp["value"] <= 1, where, "progress value 0..1")
    elif kind == "chart":
        _need(comp["kind"] in ("bar", "line"), where, "chart kind bar|line")
        _need(len(comp["labels"]) == len(comp["values"]) >= 2, where, "labels/values mismatch")
        _need(all(_is_num(v) for v in comp["values"]), where, "chart values must be numbers")
    elif kind == "form":
        _need(len(comp["fields"]) >= 1, where, "form needs fields")
        _need(all(f.get("type") in FIELD_TYPES for f in comp["fields"]), where, "bad form field")
        _need(isinstance(comp["submit"], str) and comp["submit"], where, "submit is a label")
        if "action" in comp:
            _need(bool(ACTION.match(str(comp["action"]))), where, "bad form action")
    elif kind == "tabs":
        _need(len(comp["tabs"]) >= 2, where, "tabs needs >= 2 tabs")
        _need(all(set(t) == {"label", "components"} for t in comp["tabs"]), where, "bad tab")


def check_component(comp: Any, where: str) -> None:
    """Validate one component (not its children)."""
    _need(isinstance(comp, dict), where, "component must be an object")
    kind = comp.get("type")
    _need(kind in PROPS, where, f"unknown type {kind!r}")
    required, optional = PROPS[kind]
    keys = set(comp) - {"type", "id"}
    _need(isinstance(comp.get("id"), str) and comp["id"] != "", where, f"{kind} without id")
    _need(required <= keys, where, f"{kind} missing {sorted(required - keys)}")
    _need(
        keys <= required | optional, where, f"{kind} unknown {sorted(keys - required - optional)}"
    )
    _check_props(comp, f"{where}/{comp['id']}")


def check_doc(doc: Any, where: str) -> None:
    """Validate a whole document: shape, known types, required props, unique ids."""
    _need(isinstance(doc, dict) and set(doc) == {"title", "components"}, where, "bad top level")
    _need(isinstance(doc["title"], str) and doc["title"] != "", where, "title must be text")
    _need(len(doc["components"]) >= 1, where, "no components")
    comps = _walk(doc["components"])
    for comp in comps:
        check_component(comp, where)
    ids = [c["id"] for c in comps]
    _need(
        len(ids) == len(set(ids)),
        where,
        f"duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}",
    )


UI_BLOCK = re.compile(r"```ui\n(.*?)\n```", re.S)


def normalise_answer(answer: str, where: str) -> tuple[str, bool]:
    """Parse, fill ids, validate and re-emit the one ui block of an answer.

    Returns (answer text, has_ui). At most one ui block; text before it is one sentence.
    """
    blocks = UI_BLOCK.findall(answer)
    if not blocks:
        _need("```" not in answer, where, "plain answer must not hold a fenced block")
        return answer, False
    _need(len(blocks) == 1, where, "more than one ui block")
    try:
        doc = json.loads(blocks[0])
    except json.JSONDecodeError as exc:
        raise UIDocError(f"{where}: ui block is not JSON: {exc}") from exc
    fill_ids(doc)
    check_doc(doc, where)
    lead = answer[: answer.index("```ui")].strip()
    tail = answer[answer.index("```", answer.index("```ui") + 5) + 3 :].strip()
    _need(tail == "", where, "nothing may follow the ui block")
    _need("\n" not in lead, where, "lead text must be one line")
    block = f"```ui\n{canonical(doc)}\n```"
    return (f"{lead}\n{block}" if lead else block), True


def parse_answer_doc(answer: str) -> dict[str, Any] | None:
    """The JSON document of an answer's ui block, or None for a plain answer."""
    blocks = UI_BLOCK.findall(answer)
    return json.loads(blocks[0]) if blocks else None
