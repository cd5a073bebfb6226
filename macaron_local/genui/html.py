"""Export a UI document and its live state as one self-contained HTML page.

Owns the page: inline CSS, inline SVG charts, no script, no external resource. Every component
becomes an element with ``data-id`` and ``data-kind`` (its type) so a browser test can compare
the page with the document structurally; bound values show the state passed in. NoAI values are
left out unless ``include_noai`` (the page is a file that may be shared). It must not render in
the terminal nor touch the network.
"""

from __future__ import annotations

from html import escape
from typing import Any

from macaron_local.genui.catalogue import (
    Button,
    Card,
    Chart,
    Choice,
    Component,
    Document,
    Form,
    Input,
    ListComponent,
    Progress,
    Slider,
    Stepper,
    Table,
    Tabs,
    Text,
    Toggle,
)

CSS = """body{font:15px/1.4 system-ui,sans-serif;max-width:760px;margin:2em auto;color:#222}
.c{margin:.6em 0}.card,.form,.tabs{border:1px solid #ccc;border-radius:8px;padding:.6em 1em}
label{display:block;font-weight:600}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .6em}.bar{fill:#4a7bd0}.line{stroke:#4a7bd0;fill:none}
.noai{color:#888;font-style:italic}"""


def _a(text: Any) -> str:
    return escape(str(text), quote=True)


def _md(text: str) -> str:
    """Markdown, minimally: paragraphs and **bold** (escaped first)."""
    out = []
    for para in _a(text).split("\n\n"):
        parts = para.split("**")
        out.append(
            "<p>" + "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts)) + "</p>"
        )
    return "".join(out)


class _Page:
    def __init__(self, doc: Document, state: dict[str, Any], include_noai: bool) -> None:
        self.doc, self.state = doc, state
        self.hidden = set() if include_noai else set(doc.noai_ids())

    def value(self, comp: Component) -> Any:
        return self.state.get(comp.id, comp.initial_state())

    def render(self, comp: Component) -> str:
        inner = getattr(self, f"_{type(comp).__name__.lower()}", self._generic)(comp)
        cls = f"c {comp.type}" + (" noai" if comp.id in self.hidden else "")
        return (
            f'<div class="{cls}" data-id="{_a(comp.id)}" data-kind="{_a(comp.type)}">{inner}</div>'
        )

    def many(self, comps: list[Component]) -> str:
        return "".join(self.render(c) for c in comps)

    def _private(self, comp: Component) -> str | None:
        if comp.id in self.hidden:
            return f"<label>{_a(comp.caption())}</label><span>(private, not exported)</span>"
        return None

    def _card(self, c: Card) -> str:
        return f"<h3>{_a(c.title)}</h3>{_md(c.text or '')}{self.many(c.children())}"

    def _text(self, c: Text) -> str:
        return _md(c.text)

    def _choice(self, c: Choice) -> str:
        if (hidden := self._private(c)) is not None:
            return hidden
        v = self.value(c)
        chosen = set(v) if isinstance(v, list) else {v}
        kind = "checkbox" if c.mode == "multiple" else "radio"
        opts = "".join(
            f'<div><input type="{kind}" name="{_a(c.id)}" value="{_a(o)}"'
            f"{' checked' if o in chosen else ''}> {_a(o)}</div>"
            for o in c.options
        )
        return f"<fieldset><legend>{_a(c.label)}</legend>{opts}</fieldset>"

    def _input(self, c: Input) -> str:
        if (hidden := self._private(c)) is not None:
            return hidden
        v = self.value(c)
        unit = f" {_a(c.unit)}" if c.unit else ""
        return (
            f'<label>{_a(c.label)}</label><input type="{c.kind}" name="{_a(c.id)}" '
            f'value="{_a("" if v is None else v)}" placeholder="{_a(c.placeholder or "")}">'
            f"{unit}"
        )

    def _toggle(self, c: Toggle) -> str:
        if (hidden := self._private(c)) is not None:
            return hidden
        on = " checked" if self.value(c) else ""
        return f'<label><input type="checkbox" name="{_a(c.id)}"{on}> {_a(c.label)}</label>'

    def _slider(self, c: Slider | Stepper) -> str:
        if (hidden := self._private(c)) is not None:
            return hidden
        kind = "range" if isinstance(c, Slider) else "number"
        v = self.value(c)
        return (
            f"<label>{_a(c.label)}: <output>{_a(v)}</output> {_a(c.unit or '')}</label>"
            f'<input type="{kind}" name="{_a(c.id)}" min="{c.min}" max="{c.max}" '
            f'step="{c.step}" value="{_a(v)}">'
        )

    _stepper = _slider

    def _button(self, c: Button) -> str:
        return f'<button type="button" data-action="{_a(c.action)}">{_a(c.label)}</button>'

    def _table(self, c: Table) -> str:
        st = self.value(c) or {}
        rows = [
            r
            for r in c.rows
            if not st.get("filter") or any(str(st["filter"]).lower() in str(x).lower() for x in r)
        ]
        if st.get("sort") is not None:
            rows = sorted(
                rows, key=lambda r: _key(r[st["sort"]]), reverse=bool(st.get("descending"))
            )
        head = "".join(f"<th>{_a(h)}</th>" for h in c.columns)
        body = "".join("<tr>" + "".join(f"<td>{_a(x)}</td>" for x in r) + "</tr>" for r in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def _listcomponent(self, c: ListComponent) -> str:
        done = set(self.value(c) or [])
        tag = "ol" if c.ordered else "ul"
        items = "".join(
            (
                f'<li><input type="checkbox"{" checked" if i in done else ""}> {_a(t)}</li>'
                if c.checkable
                else f"<li>{_a(t)}</li>"
            )
            for i, t in enumerate(c.items)
        )
        return f"<{tag}>{items}</{tag}>"

    def _tabs(self, c: Tabs) -> str:
        active = self.value(c) or 0
        return "".join(
            f'<section data-tab="{i}"{" data-active" if i == active else ""}>'
            f"<h4>{_a(t.label)}</h4>{self.many(t.components)}</section>"
            for i, t in enumerate(c.tabs)
        )

    def _progress(self, c: Progress) -> str:
        label = f"<label>{_a(c.label)}</label>" if c.label else ""
        return f'{label}<progress max="1" value="{c.value}"></progress> {c.value:.0%}'

    def _chart(self, c: Chart) -> str:
        return (f"<h4>{_a(c.title or '')}</h4>" if c.title else "") + _svg(c)

    def _form(self, c: Form) -> str:
        return (
            f'<form data-action="{_a(c.action)}">{self.many(c.children())}'
            f'<button type="submit">{_a(c.submit)}</button></form>'
        )

    def _generic(self, c: Component) -> str:
        props = c.model_dump(exclude={"type", "id"}, exclude_none=True)
        rows = "".join(f"<dt>{_a(k)}</dt><dd>{_a(v)}</dd>" for k, v in props.items())
        return f"<dl>{rows}</dl>"


def _key(x: Any) -> tuple[int, Any]:
    return (0, x) if isinstance(x, int | float) else (1, str(x))


def _svg(c: Chart, w: int = 480, h: int = 160) -> str:
    top = max(max(c.values), 0) or 1
    n = len(c.values)
    step = w / n
    if c.kind == "bar":
        marks = "".join(
            f'<rect class="bar" x="{i * step + 4:.1f}" y="{h - v / top * h:.1f}" '
            f'width="{step - 8:.1f}" height="{v / top * h:.1f}"><title>{_a(lb)}: {v}</title>'
            f"</rect>"
            for i, (lb, v) in enumerate(zip(c.labels, c.values, strict=True))
        )
    else:
        pts = " ".join(
            f"{i * step + step / 2:.1f},{h - v / top * h:.1f}" for i, v in enumerate(c.values)
        )
        marks = f'<polyline class="line" points="{pts}"/>'
    labels = "".join(
        f'<text x="{i * step + step / 2:.1f}" y="{h + 14}" font-size="11" '
        f'text-anchor="middle">{_a(lb)}</text>'
        for i, lb in enumerate(c.labels)
    )
    return f'<svg width="{w}" height="{h + 20}" role="img">{marks}{labels}</svg>'


def to_html(
    doc: Document, state: dict[str, Any] | None = None, *, include_noai: bool = False
) -> str:
    """The page for ``doc`` showing ``state`` (its initial state when None)."""
    page = _Page(doc, state if state is not None else doc.initial_state(), include_noai)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_a(doc.title)}</title><style>{CSS}</style></head>"
        f'<body><main data-ui="{_a(doc.title)}"><h2>{_a(doc.title)}</h2>'
        f"{page.many(doc.components)}</main></body></html>\n"
    )
