"""The catalogue accepts exactly the v0 documents, rejects broken ones, and takes plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from macaron_local.errors import ContractError
from macaron_local.genui.catalogue import default_catalogue
from macaron_local.genui.extend import plugin_catalogue, with_plugins
from macaron_local.plugins.manager import PluginManager
from tests.genui.conftest import KITCHEN_SINK, training_docs


def test_every_training_document_validates_and_round_trips() -> None:
    cat = default_catalogue()
    docs = training_docs()
    assert len(docs) > 100
    for text in docs:
        doc = cat.parse(text)
        assert json.loads(doc.to_json()) == json.loads(text)


def test_the_kitchen_sink_has_every_builtin_type() -> None:
    doc = default_catalogue().document(KITCHEN_SINK)
    assert {c.type for c in doc.walk()} == set(default_catalogue().models)
    assert doc.noai_ids() == {"card"}
    again = default_catalogue().parse(doc.to_json())
    assert again == doc


@pytest.mark.parametrize(
    "broken, where",
    [
        ({"title": "t", "components": []}, "components"),
        (
            {"title": "t", "components": [{"type": "text", "id": "a", "text": "x", "bold": True}]},
            "bold",
        ),
        (
            {
                "title": "t",
                "components": [
                    {"type": "text", "id": "a", "text": "x"},
                    {"type": "text", "id": "a", "text": "y"},
                ],
            },
            "duplicate",
        ),
        (
            {
                "title": "t",
                "components": [
                    {
                        "type": "slider",
                        "id": "s",
                        "label": "S",
                        "min": 5,
                        "max": 1,
                        "step": 1,
                        "value": 3,
                    }
                ],
            },
            "min < max",
        ),
        (
            {
                "title": "t",
                "components": [
                    {"type": "table", "id": "t", "columns": ["a", "b"], "rows": [["x"]]}
                ],
            },
            "cell",
        ),
        (
            {
                "title": "t",
                "components": [{"type": "button", "id": "b", "label": "B", "action": "rm -rf"}],
            },
            "action",
        ),
        (
            {
                "title": "t",
                "components": [
                    {
                        "type": "form",
                        "id": "f",
                        "submit": "Go",
                        "fields": [{"type": "text", "id": "x", "text": "t"}],
                    }
                ],
            },
            "form fields",
        ),
        (
            {
                "title": "t",
                "components": [{"type": "toggle", "id": "t", "label": "T", "value": "yes"}],
            },
            "bool",
        ),
        (
            {"title": "t", "extra": 1, "components": [{"type": "text", "id": "a", "text": "x"}]},
            "extra",
        ),
    ],
)
def test_broken_documents_are_refused_with_the_field(broken: dict, where: str) -> None:
    with pytest.raises(ContractError) as err:
        default_catalogue().document(broken)
    assert where.lower() in str(err.value).lower()


PLUGIN = """
from macaron_local.plugins import hookimpl

@hookimpl
def register_components(register):
    register("rating", {"description": "stars", "props": {"label": "string",
             "stars": "integer", "value": "integer"}, "required": ["label", "stars"],
             "value": "value", "field": True})
    register("Bad Name", {"props": {"x": "string"}})
"""


def test_a_plugin_adds_a_component_through_the_hook(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "stars.py").write_text(PLUGIN)
    manager = PluginManager(user_dir=folder, bundled=False, entry_points=False)
    manager.load()
    cat, warnings = plugin_catalogue(manager)
    assert "rating" in cat.models and any("Bad Name" in w for w in warnings)
    doc = cat.document(
        {
            "title": "Rate it",
            "components": [
                {
                    "type": "form",
                    "id": "f",
                    "fields": [
                        {"type": "rating", "id": "r", "label": "Food", "stars": 5, "value": 4}
                    ],
                    "submit": "Send",
                }
            ],
        }
    )
    assert doc.initial_state() == {"r": 4}
    with pytest.raises(ContractError):
        cat.document({"title": "x", "components": [{"type": "rating", "id": "r", "label": "Food"}]})
    with pytest.raises(ContractError):  # the built-in catalogue does not know it
        default_catalogue().document(doc.to_dict())


def test_a_plugin_cannot_replace_a_builtin() -> None:
    cat, warnings = with_plugins({"card": {"props": {"x": "string"}}})
    assert warnings and cat.models["card"] is default_catalogue().models["card"]
