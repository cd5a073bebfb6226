"""The HTML page a person (or a model without a catalogue) would write for the same interface.

Plain semantic HTML, one short style block, and only the script a live page needs: sending the
values (every page with an action), sorting and filtering (only when a table asks for it).
Tabs are ``<details>`` (no script). Used by ``bench/genui.py`` to count output tokens.
"""

from __future__ import annotations

from html import escape
from typing import Any

from macaron_local.genui import catalogue as C

STYLE = (
    "<style>body{font-family:sans-serif;max-width:40em;margin:auto}label,fieldset"
    "{display:block;margin:.5em 0}table{border-collapse:collapse}td,th{border:1px solid "
    "#ccc;padding:4px}</style>"
)
SEND = (
    "<script>function send(a){const v={};document.querySelectorAll('input').forEach(i=>"
    "{if(i.type=='checkbox')v[i.name]=i.checked;else if(i.type=='radio'){if(i.checked)"
    "v[i.name]=i.value}else v[i.name]=i.value});parent.postMessage({action:a,values:v},"
    "'*')}</script>"
)
SORT = (
    "<script>function sortBy(th){const t=th.closest('table'),i=th.cellIndex,d=th.dataset."
    "d=th.dataset.d=='1'?'0':'1';const r=[...t.rows].slice(1);r.sort((a,b)=>{const x=a."
    "cells[i].innerText,y=b.cells[i].innerText;return(isNaN(x-y)?x.localeCompare(y):x-y)*"
    "(d=='1'?1:-1)});r.forEach(x=>t.tBodies[0].appendChild(x))}function filt(inp,id){const"
    " q=inp.value.toLowerCase();[...document.getElementById(id).rows].slice(1).forEach(r=>"
    "r.hidden=!r.innerText.toLowerCase().includes(q))}</script>"
)


def _e(x: Any) -> str:
    return escape(str(x))


def _md(text: str) -> str:
    parts = _e(text).split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


def _choice(c: C.Choice) -> str:
    kind = "radio" if c.mode == "single" else "checkbox"
    chosen = c.initial_state()
    chosen = chosen if isinstance(chosen, list) else [chosen]
    opts = "".join(
        f'<label><input type="{kind}" name="{c.id}" value="{_e(o)}"'
        f"{' checked' if o in chosen else ''}> {_e(o)}</label>"
        for o in c.options
    )
    return f"<fieldset><legend>{_e(c.label)}</legend>{opts}</fieldset>"


def _input(c: C.Input) -> str:
    unit = f" ({_e(c.unit)})" if c.unit else ""
    value = f' value="{_e(c.value)}"' if c.value is not None else ""
    ph = f' placeholder="{_e(c.placeholder)}"' if c.placeholder else ""
    return f'<label>{_e(c.label)}{unit} <input type="{c.kind}" name="{c.id}"{value}{ph}></label>'


def _range(c: C.Slider | C.Stepper) -> str:
    unit = f" {_e(c.unit)}" if c.unit else ""
    attrs = f'name="{c.id}" min="{c.min}" max="{c.max}" step="{c.step}" value="{c.value}"'
    if isinstance(c, C.Stepper):
        return f'<label>{_e(c.label)} <input type="number" {attrs}>{unit}</label>'
    return (
        f'<label>{_e(c.label)} <input type="range" {attrs} oninput="this.nextElementSibling'
        f'.value=this.value"><output>{c.value}</output>{unit}</label>'
    )


def _table(c: C.Table) -> str:
    click = ' onclick="sortBy(this)"' if c.sortable else ""
    head = "".join(f"<th{click}>{_e(h)}</th>" for h in c.columns)
    body = "".join("<tr>" + "".join(f"<td>{_e(x)}</td>" for x in r) + "</tr>" for r in c.rows)
    box = f'<input placeholder="Filter" oninput="filt(this,\'{c.id}\')">' if c.filterable else ""
    return f'{box}<table id="{c.id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _chart(c: C.Chart) -> str:
    top, n = max(max(c.values), 1), len(c.values)
    w = 400 / n
    if c.kind == "bar":
        marks = "".join(
            f'<rect x="{i * w + 2:.0f}" y="{150 - v / top * 150:.0f}" '
            f'width="{w - 4:.0f}" height="{v / top * 150:.0f}" fill="#47c"/>'
            for i, v in enumerate(c.values)
        )
    else:
        pts = " ".join(
            f"{i * w + w / 2:.0f},{150 - v / top * 150:.0f}" for i, v in enumerate(c.values)
        )
        marks = f'<polyline points="{pts}" fill="none" stroke="#47c"/>'
    labels = "".join(
        f'<text x="{i * w + w / 2:.0f}" y="165" font-size="10" text-anchor="middle">{_e(lb)}</text>'
        for i, lb in enumerate(c.labels)
    )
    title = f"<h3>{_e(c.title)}</h3>" if c.title else ""
    return f'{title}<svg width="400" height="170">{marks}{labels}</svg>'


def _one(c: C.Component) -> str:  # one branch per component type
    if isinstance(c, C.Card):
        text = f"<p>{_md(c.text)}</p>" if c.text else ""
        return f"<section><h2>{_e(c.title)}</h2>{text}{_many(c.children())}</section>"
    if isinstance(c, C.Text):
        return f"<p>{_md(c.text)}</p>"
    if isinstance(c, C.Choice):
        return _choice(c)
    if isinstance(c, C.Input):
        return _input(c)
    if isinstance(c, C.Toggle):
        on = " checked" if c.value else ""
        return f'<label><input type="checkbox" name="{c.id}"{on}> {_e(c.label)}</label>'
    if isinstance(c, C.Slider | C.Stepper):
        return _range(c)
    if isinstance(c, C.Button):
        if c.action == "reset":
            return f'<button onclick="location.reload()">{_e(c.label)}</button>'
        return f"<button onclick=\"send('{c.action}')\">{_e(c.label)}</button>"
    if isinstance(c, C.Table):
        return _table(c)
    if isinstance(c, C.ListComponent):
        tag = "ol" if c.ordered else "ul"
        item = (
            '<li><label><input type="checkbox"> {}</label></li>' if c.checkable else "<li>{}</li>"
        )
        return f"<{tag}>" + "".join(item.format(_e(t)) for t in c.items) + f"</{tag}>"
    if isinstance(c, C.Tabs):
        return "".join(
            f"<details{' open' if i == 0 else ''}><summary>{_e(t.label)}</summary>"
            f"{_many(t.components)}</details>"
            for i, t in enumerate(c.tabs)
        )
    if isinstance(c, C.Progress):
        label = f"{_e(c.label)} " if c.label else ""
        return f'<label>{label}<progress value="{c.value}" max="1"></progress></label>'
    if isinstance(c, C.Chart):
        return _chart(c)
    if isinstance(c, C.Form):
        return (
            f"<form onsubmit=\"send('{c.action}');return false\">{_many(c.children())}"
            f"<button>{_e(c.submit)}</button></form>"
        )
    return f"<div>{_e(c.caption())}</div>"


def _many(comps: list[C.Component]) -> str:
    return "".join(_one(c) for c in comps)


def equivalent_html(doc: C.Document) -> str:
    """A self-contained page with the same controls, values and charts as ``doc``."""
    comps = list(doc.walk())
    scripts = ""
    if any(isinstance(c, C.Button | C.Form) and c.action != "reset" for c in comps):
        scripts += SEND
    if any(isinstance(c, C.Table) and (c.sortable or c.filterable) for c in comps):
        scripts += SORT
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{_e(doc.title)}'
        f"</title>{STYLE}</head><body>\n<h1>{_e(doc.title)}</h1>\n"
        f"{_many(doc.components)}\n{scripts}</body></html>"
    )
