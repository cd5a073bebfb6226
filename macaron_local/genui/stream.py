"""Streaming parser for L3 answers: components come out as soon as their JSON is complete.

Feed :class:`UiStream` the answer's text chunks as they are decoded; each ``feed`` returns the
events the new text completed: :class:`Prose` (text outside the ui block, held back only while
it could still be the start of a fence), :class:`Title`, :class:`ComponentReady` (one top-level
component, validated), :class:`DocumentReady` (the whole document) and :class:`Invalid` (a
component or document that breaks the catalogue: the answer then falls back to text). It owns
the incremental JSON scan only; it must not render.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from macaron_local.errors import ContractError
from macaron_local.genui.catalogue import Catalogue, Component, Document, default_catalogue

FENCE = "```ui\n"
UI_BLOCK = re.compile(r"```ui\n(.*?)\n```", re.S)


@dataclass(frozen=True)
class Prose:
    text: str


@dataclass(frozen=True)
class Title:
    text: str


@dataclass(frozen=True)
class ComponentReady:
    index: int
    component: Component


@dataclass(frozen=True)
class DocumentReady:
    document: Document


@dataclass(frozen=True)
class Invalid:
    error: str


Event = Prose | Title | ComponentReady | DocumentReady | Invalid


class _JsonScan:
    """Tracks depth and strings over a one-document JSON text, char by char."""

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.key: str | None = None  # the last key read at depth 1
        self.str_start = 0
        self.comp_depth: int | None = None  # depth of the top-level components array
        self.comp_start: int | None = None
        self.expect_key = False
        self.done = False


class UiStream:
    """Incremental parser of one L3 answer."""

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.catalogue = catalogue or default_catalogue()
        self.prose = ""
        self.document: Document | None = None
        self.components: list[Component] = []
        self.error: str | None = None
        self._pending = ""  # prose that might begin a fence
        self._in_ui = False
        self._scan = _JsonScan()

    @property
    def in_ui(self) -> bool:
        return self._in_ui

    def feed(self, chunk: str) -> list[Event]:
        """Consume ``chunk``; the events it completed, in order."""
        if self._in_ui:
            return self._feed_json(chunk)
        text = self._pending + chunk
        at = text.find(FENCE)
        if at >= 0:
            self._pending, self._in_ui = "", True
            events = self._prose(text[:at])
            return events + self._feed_json(text[at + len(FENCE) :])
        keep = _fence_prefix(text)
        self._pending = text[len(text) - keep :] if keep else ""
        return self._prose(text[: len(text) - keep])

    def close(self) -> list[Event]:
        """End of the answer: flush held prose; Invalid if a ui block never completed."""
        events = self._prose(self._pending)
        self._pending = ""
        if self._in_ui and self.document is None and self.error is None:
            self.error = "the ui block ended before the document was complete"
            events.append(Invalid(self.error))
        return events

    def _prose(self, text: str) -> list[Event]:
        if not text:
            return []
        self.prose += text
        return [Prose(text)]

    def _feed_json(self, chunk: str) -> list[Event]:
        s = self._scan
        events: list[Event] = []
        for ch in chunk:
            if s.done:
                break
            s.buf.append(ch)
            events += self._step(s, ch)
        return events

    def _step(self, s: _JsonScan, ch: str) -> list[Event]:
        if s.in_str:
            if s.esc:
                s.esc = False
            elif ch == "\\":
                s.esc = True
            elif ch == '"':
                s.in_str = False
                return self._string_done(s)
            return []
        if ch == '"':
            s.in_str, s.str_start = True, len(s.buf) - 1
        elif ch in "{[":
            s.depth += 1
            if ch == "{" and s.depth == 1:
                s.expect_key = True
            if ch == "[" and s.depth == 2 and s.key == "components":
                s.comp_depth = 2
            elif ch == "{" and s.comp_depth is not None and s.depth == 3:
                s.comp_start = len(s.buf) - 1
        elif ch in "}]":
            return self._close(s, ch)
        elif ch == "," and s.depth == 1:
            s.expect_key = True
        return []

    def _string_done(self, s: _JsonScan) -> list[Event]:
        if s.depth != 1:
            return []
        value = json.loads("".join(s.buf[s.str_start :]))
        if s.expect_key:
            s.key, s.expect_key = value, False
            return []
        return [Title(value)] if s.key == "title" else []

    def _close(self, s: _JsonScan, ch: str) -> list[Event]:
        s.depth -= 1
        if ch == "}" and s.depth == 2 and s.comp_start is not None:
            text, s.comp_start = "".join(s.buf[s.comp_start :]), None
            return self._component(text)
        if ch == "]" and s.depth == 1 and s.comp_depth is not None:
            s.comp_depth = None
        if s.depth == 0:
            s.done = True
            return self._document("".join(s.buf))
        return []

    def _component(self, text: str) -> list[Event]:
        try:
            comp = self.catalogue.component(json.loads(text))
        except (ValueError, ContractError) as exc:
            self.error = f"component {len(self.components) + 1}: {exc}"
            return [Invalid(self.error)]
        self.components.append(comp)
        return [ComponentReady(len(self.components) - 1, comp)]

    def _document(self, text: str) -> list[Event]:
        try:
            self.document = self.catalogue.parse(text)
        except ContractError as exc:
            self.error = str(exc)
            return [Invalid(self.error)]
        return [DocumentReady(self.document)]


def _fence_prefix(text: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of the fence."""
    for n in range(min(len(FENCE) - 1, len(text)), 0, -1):
        if FENCE.startswith(text[-n:]):
            return n
    return 0


@dataclass(frozen=True)
class Answer:
    """An L3 answer split: the prose, and the document (None for a plain answer)."""

    prose: str
    document: Document | None
    error: str | None = None


def split_answer(text: str, catalogue: Catalogue | None = None) -> Answer:
    """Parse a whole L3 answer; an invalid ui block keeps the text and says why."""
    m = UI_BLOCK.search(text)
    if m is None:
        return Answer(text.strip(), None)
    prose = text[: m.start()].strip()
    try:
        return Answer(prose, (catalogue or default_catalogue()).parse(m.group(1)))
    except ContractError as exc:
        return Answer(text.strip(), None, str(exc))
