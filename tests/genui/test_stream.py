"""The streaming parser: components come out as soon as their JSON closes, in any chunking."""

from __future__ import annotations

import pytest

from macaron_local.genui.catalogue import default_catalogue
from macaron_local.genui.stream import (
    ComponentReady,
    DocumentReady,
    Invalid,
    Prose,
    Title,
    UiStream,
    split_answer,
)
from tests.genui.conftest import KITCHEN_SINK, training_answers


def run(text: str, size: int) -> tuple[UiStream, list[tuple[int, object]]]:
    parser = UiStream()
    seen: list[tuple[int, object]] = []
    for at in range(0, len(text), size):
        seen += [(at + size, ev) for ev in parser.feed(text[at : at + size])]
    seen += [(len(text), ev) for ev in parser.close()]
    return parser, seen


@pytest.mark.parametrize("size", [1, 3, 17, 100000])
def test_every_training_answer_streams_to_its_document(size: int) -> None:
    for answer in training_answers()[:80]:
        parser, events = run(answer, size)
        whole = split_answer(answer)
        assert parser.error is None
        assert parser.prose.strip() == whole.prose
        assert parser.document == whole.document
        if whole.document is not None:
            comps = [ev.component for _, ev in events if isinstance(ev, ComponentReady)]
            assert comps == list(whole.document.components)


def test_components_come_out_before_the_document_ends() -> None:
    doc = default_catalogue().document(KITCHEN_SINK)
    text = "Here it is.\n```ui\n" + doc.to_json() + "\n```"
    _, events = run(text, 4)
    first = next(at for at, ev in events if isinstance(ev, ComponentReady))
    done = next(at for at, ev in events if isinstance(ev, DocumentReady))
    title = next(ev for _, ev in events if isinstance(ev, Title))
    assert title.text == "Everything"
    assert first < done / 4  # the first of 17 components is out long before the end
    readies = [ev for _, ev in events if isinstance(ev, ComponentReady)]
    assert [r.index for r in readies] == list(range(len(doc.components)))
    prose = "".join(ev.text for _, ev in events if isinstance(ev, Prose))
    assert prose == "Here it is.\n"


def test_other_fences_and_backticks_stay_prose() -> None:
    text = "Use `ls` or\n```bash\nls -la\n```\ndone"
    parser, events = run(text, 2)
    assert parser.prose == text and not parser.in_ui
    assert all(isinstance(ev, Prose) for _, ev in events)


def test_a_broken_component_is_reported_and_a_cut_block_is_invalid() -> None:
    bad = (
        '```ui\n{"title": "t", "components": [{"type": "slider", "id": "s", "label": "S",'
        ' "min": 9, "max": 1, "step": 1, "value": 3}]}\n```'
    )
    parser, events = run(bad, 5)
    assert any(isinstance(ev, Invalid) for _, ev in events) and parser.document is None
    parser, events = run(
        '```ui\n{"title": "t", "components": [{"type": "text", "id": "a", "text": "x"}', 7
    )
    assert len([ev for _, ev in events if isinstance(ev, ComponentReady)]) == 1
    assert isinstance(events[-1][1], Invalid)
