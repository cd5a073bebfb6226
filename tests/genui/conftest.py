"""GenUI fixtures: a document with every catalogue component, the training documents, and a
real runtime on the embedded model under the fast test profile (tests/turns/conftest.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from macaron_local.genui.catalogue import Document, default_catalogue
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

ROOT = Path(__file__).resolve().parents[2]
SECRET = "4111-1111-1111-1111"

KITCHEN_SINK: dict[str, Any] = {
    "title": "Everything",
    "components": [
        {
            "type": "card",
            "id": "intro",
            "title": "Intro",
            "text": "Some **bold** text",
            "components": [{"type": "text", "id": "note", "text": "A note."}],
        },
        {
            "type": "choice",
            "id": "plan",
            "label": "Plan",
            "mode": "single",
            "options": ["Basic", "Pro", "Team"],
            "value": "Pro",
        },
        {
            "type": "choice",
            "id": "extras",
            "label": "Extras",
            "mode": "multiple",
            "options": ["Backup", "Support", "Domain"],
            "value": ["Support"],
        },
        {"type": "input", "id": "name", "label": "Name", "kind": "text", "value": "Ada"},
        {"type": "input", "id": "seats", "label": "Seats", "kind": "number", "value": 3},
        {"type": "input", "id": "start", "label": "Start", "kind": "date", "value": "2026-01-05"},
        {"type": "toggle", "id": "yearly", "label": "Pay yearly", "value": True},
        {
            "type": "slider",
            "id": "budget",
            "label": "Budget",
            "min": 0,
            "max": 100,
            "step": 5,
            "value": 40,
            "unit": "€",
        },
        {
            "type": "stepper",
            "id": "guests",
            "label": "Guests",
            "min": 1,
            "max": 8,
            "step": 1,
            "value": 2,
        },
        {
            "type": "table",
            "id": "prices",
            "columns": ["Plan", "Price"],
            "rows": [["Basic", 8], ["Pro", 15], ["Team", 23]],
            "sortable": True,
            "filterable": True,
        },
        {"type": "list", "id": "todo", "checkable": True, "items": ["Pack", "Book", "Go"]},
        {"type": "list", "id": "steps", "ordered": True, "items": ["One", "Two"]},
        {
            "type": "tabs",
            "id": "views",
            "tabs": [
                {
                    "label": "Chart",
                    "components": [
                        {
                            "type": "chart",
                            "id": "sales",
                            "title": "Sales",
                            "kind": "bar",
                            "labels": ["Q1", "Q2"],
                            "values": [3, 5],
                            "unit": "k",
                        }
                    ],
                },
                {
                    "label": "Trend",
                    "components": [
                        {
                            "type": "chart",
                            "id": "trend",
                            "kind": "line",
                            "labels": ["a", "b", "c"],
                            "values": [1, 3, 2],
                        }
                    ],
                },
            ],
        },
        {"type": "progress", "id": "done", "label": "Done", "value": 0.25},
        {
            "type": "form",
            "id": "signup",
            "fields": [
                {"type": "input", "id": "email", "label": "Email", "kind": "text"},
                {
                    "type": "input",
                    "id": "card",
                    "label": "Card number",
                    "kind": "text",
                    "noai": True,
                },
                {"type": "toggle", "id": "news", "label": "Newsletter"},
            ],
            "submit": "Sign up",
            "action": "send",
        },
        {"type": "button", "id": "reset", "label": "Reset", "action": "reset"},
        {"type": "button", "id": "save", "label": "Save", "action": "tool:notes.add"},
    ],
}

# A value for every bound component, different from its initial value.
NEW_STATE: dict[str, Any] = {
    "plan": "Team",
    "extras": ["Backup", "Domain"],
    "name": "Grace",
    "seats": 7,
    "start": "2026-02-01",
    "yearly": False,
    "budget": 65,
    "guests": 5,
    "prices": {"sort": 1, "descending": True, "filter": "a"},
    "todo": [0, 2],
    "views": 1,
    "email": "ada@example.org",
    "card": SECRET,
    "news": True,
}


@pytest.fixture
def sink() -> Document:
    return default_catalogue().document(KITCHEN_SINK)


def training_answers() -> list[str]:
    path = ROOT / "models" / "data" / "genui.jsonl"
    return [json.loads(line)["messages"][1]["content"] for line in path.open()]


def training_docs() -> list[str]:
    return [
        m.group(1) for a in training_answers() if (m := re.search(r"```ui\n(.*?)\n```", a, re.S))
    ]


def write_profile(home: Path) -> None:
    """tall-local, standalone, with the base weights for every label and short answers.

    These tests are about what reaches the model, not answer quality, and must not depend on
    which default adapters are trained yet (``revision = "none"``)."""
    text = (ROOT / "hcp_profiles" / "tall-local.toml").read_text()
    text = text.replace('revision = "bundled"', 'revision = "none"')
    text = text.replace('id = "tall-local"', 'id = "test-fast"')
    write_fast_profile(home)  # the fast settings, as the turn tests use them
    fast = (home / "config" / "profiles" / "test-fast.toml").read_text()
    overrides = fast[fast.index("[summary]") :]
    (home / "config" / "profiles" / "test-fast.toml").write_text(_merge(text, overrides))


def _merge(base: str, overrides: str) -> str:
    """Replace whole ``[table]`` keys of ``base`` by those in ``overrides`` (small TOML edit)."""
    import tomllib

    import tomli_w

    doc = tomllib.loads(base)
    for table, values in tomllib.loads(overrides).items():
        _deep_update(doc.setdefault(table, {}), values)
    return tomli_w.dumps(doc)


def _deep_update(into: dict[str, Any], values: dict[str, Any]) -> None:
    for key, value in values.items():
        if isinstance(value, dict):
            _deep_update(into.setdefault(key, {}), value)
        else:
            into[key] = value


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from macaron_local.hcp import approve, load_profile
    from macaron_local.store import open_db
    from macaron_local.turns.pipeline import Runtime

    home = tmp_path_factory.mktemp("genui-rt")
    write_profile(home)
    with macaron_home(home):
        db = open_db(home / "data" / "macaron.db")
        approve(db, load_profile("test-fast"), "genui tests", "standalone test profile")
        db.close()
        rt = Runtime.open("test-fast", db_path=home / "data" / "macaron.db")
    yield rt
    rt.close()
