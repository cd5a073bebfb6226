"""The catalogue's grammar: llama.cpp accepts it, it admits every training answer token by
token, it refuses what the catalogue refuses, and a real decode under it parses."""

from __future__ import annotations

import ctypes
import json
import math
from pathlib import Path

import pytest

from macaron_local.engine import _lcpp
from macaron_local.engine.tokenizer import shared_tokenizer
from macaron_local.genui.catalogue import default_catalogue
from macaron_local.genui.extend import with_plugins
from macaron_local.genui.grammar import catalogue_gbnf, ui_grammar
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


def accepts(gbnf: str, text: str) -> bool:
    """Walk ``text``'s tokens through llama.cpp's grammar sampler, then end of generation."""
    L = _lcpp.lib()
    voc = shared_tokenizer()
    eos = L.llama_vocab_eos(voc.raw)
    sampler = _lcpp.grammar_sampler(voc.raw, gbnf)
    assert sampler
    try:
        for tok in voc.tokenize(text, add_special=False, parse_special=False) + [eos]:
            data = (L.llama_token_data * 1)(L.llama_token_data(tok, 0.0, 0.0))
            arr = L.llama_token_data_array(data, 1, -1, False)
            L.llama_sampler_apply(sampler, ctypes.byref(arr))
            if math.isinf(data[0].logit):
                return False
            if tok != eos:
                L.llama_sampler_accept(sampler, tok)
        return True
    finally:
        _lcpp.free_sampler(sampler)


@pytest.fixture(scope="module")
def gbnf() -> str:
    return ui_grammar()  # validated by llama.cpp's parser


def test_every_training_answer_is_in_the_grammar(gbnf: str) -> None:
    answers = training_answers()
    refused = [a[:80] for a in answers if not accepts(gbnf, a)]
    assert refused == []
    assert any("```ui" not in a for a in answers)  # plain answers are covered too


def test_the_kitchen_sink_with_extensions_is_in_the_grammar(gbnf: str) -> None:
    doc = default_catalogue().document({**KITCHEN_SINK, "visibility": {"noai": ["email"]}})
    assert accepts(gbnf, "Here you go.\n```ui\n" + doc.to_json() + "\n```")


@pytest.mark.parametrize(
    "bad",
    [
        '```ui\n{"title": "t", "components": [{"type": "text", "id": "a", "text": "x", '
        '"bold": true}]}\n```',  # unknown prop
        '```ui\n{"title": "t", "components": [{"type": "blink", "id": "a"}]}\n```',  # unknown type
        '```ui\n{"title": "t", "components": [{"type": "toggle", "id": "a", "label": "A", '
        '"value": "yes"}]}\n```',  # wrong value type
        '```ui\n{"title": "t", "components": []}\n```',  # no component
        'Two lines\nof lead\n```ui\n{"title": "t", "components": [{"type": "text", "id": "a", '
        '"text": "x"}]}\n```',  # lead is one line
        '```ui\n{"title": "t", "components": [{"type": "text", "id": "a", "text": "x"}]}\n```\n'
        "and more",  # text after the block
        "Here is code:\n```python\nprint(1)\n```",  # another fence
    ],
)
def test_the_grammar_refuses_what_the_catalogue_refuses(gbnf: str, bad: str) -> None:
    assert not accepts(gbnf, bad)


def test_plugin_components_enter_the_grammar() -> None:
    cat, warnings = with_plugins(
        {
            "rating": {
                "props": {"label": "string", "stars": "integer"},
                "required": ["label", "stars"],
            }
        }
    )
    assert not warnings
    gbnf = ui_grammar(cat)
    doc = (
        '{"title": "t", "components": [{"type": "rating", "id": "r", "label": "Food", "stars": 5}]}'
    )
    assert accepts(gbnf, f"```ui\n{doc}\n```")
    assert not accepts(catalogue_gbnf(), f"```ui\n{doc}\n```")


def test_tool_actions_can_be_limited_to_the_allowlisted_tools() -> None:
    doc = (
        '```ui\n{"title": "t", "components": [{"type": "button", "id": "b", "label": "B", '
        '"action": "tool:%s"}]}\n```'
    )
    gbnf = ui_grammar(tools=["notes.add"])
    assert accepts(gbnf, doc % "notes.add")
    assert not accepts(gbnf, doc % "shell.run")
    assert accepts(catalogue_gbnf(), doc % "shell.run")  # any well-formed name otherwise


def test_a_real_decode_under_the_grammar_parses(model_path: Path) -> None:
    """The embedded model, without an L3 adapter, decoding under the grammar: whatever it
    writes, every component it completes is valid and a finished document parses."""
    from macaron_local.engine import Engine, EngineConfig

    example = {
        "title": "Tip calculator",
        "components": [
            {
                "type": "slider",
                "id": "tip",
                "label": "Tip",
                "min": 0,
                "max": 30,
                "step": 1,
                "value": 15,
                "unit": "%",
            }
        ],
    }
    system = "Answer with a ```ui block holding one JSON UI document: " + json.dumps(example)
    with Engine(model_path, EngineConfig(n_ctx=2048)) as engine:
        prompt = engine.render_chat(
            [
                {"role": "system", "content": system},
                {"role": "user", "content": "a form to log my workouts"},
            ]
        )
        stream = engine.generate(
            prompt, max_tokens=400, grammar=ui_grammar(allow_plain=False, tools=["notes.add"])
        )
        parser = UiStream()
        events = [ev for piece in stream for ev in parser.feed(piece)]
        done = stream.result()
    events += parser.close()
    assert parser.in_ui and "```ui\n{" in done.text
    assert all(
        isinstance(ev, ComponentReady | Title | Prose | DocumentReady)
        for ev in events
        if not (isinstance(ev, Invalid) and "ended before" in ev.error)
    )
    if done.finish_reason == "eog":
        assert split_answer(done.text).document is not None
