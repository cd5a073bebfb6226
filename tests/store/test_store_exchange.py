"""Export (JSON and Markdown) and import: round trip modulo ids, readable Markdown, bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store import (
    NewToolCall,
    NewTurn,
    branch,
    commit_turn,
    create_session,
    export_session,
    get_session,
    import_session,
    save_summary,
    tool_calls,
)

Counts = Callable[[sqlite_utils.Database], dict[str, int]]
LABELS = ("L0", "L1", "L2", "L3")  # the labels of the profile the import serves under


def _conversation(db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]) -> str:
    """Four turns over three adapters, a sticky tool result, a retry, summaries, tool calls."""
    sid = create_session(db, "Trip planning", profile_id="default").id
    t1 = commit_turn(db, sid, make_turn("plan a trip", "Sure, where to?"), expected_head=None)
    call = NewToolCall(step=0, label="L1", code="weather('Lisbon')", result="sunny", status="ok")
    t2 = commit_turn(
        db,
        sid,
        make_turn("weather in Lisbon?", "```py\nweather()\n```", label="L1"),
        [
            call,
            NewToolCall(
                step=1, label="L1", code="x = 1/0", result="ZeroDivisionError", status="error"
            ),
        ],
        expected_head=t1.id,
    )
    t3 = commit_turn(
        db,
        sid,
        make_turn("sunny", "It's sunny.", label="L1", route_kind="sticky", tool_result_of=t2.id),
        expected_head=t2.id,
    )
    old = commit_turn(db, sid, make_turn("a regex for dates", "old"), expected_head=t3.id)
    commit_turn(
        db,
        sid,
        make_turn(
            "a regex for dates",
            r"\d{4}-\d{2}",
            label="L2",
            route_kind="manual",
            backend="remote",
            failover_reason="local too slow",
            meta={"pin": "/code"},
        ),
        expected_head=old.id,
        parent_id=t3.id,
    )
    for turn, text in ((t1, "user wants a trip"), (t2, "checked weather")):
        save_summary(db, turn.id, label=turn.label, text=text, n_tokens=4, adapter_revision="r1")
    return sid


def _normalise(export: str) -> dict[str, Any]:
    """The export with every id replaced by its order of appearance."""
    doc = json.loads(export)
    names: dict[str, str] = {}

    def rename(value: str | None) -> str | None:
        if value is None:
            return None
        return names.setdefault(value, f"id{len(names)}")

    doc["session"]["id"] = rename(doc["session"]["id"])
    for entry in doc["turns"]:
        turn = entry["turn"]
        for key in ("id", "parent_id", "tool_result_of"):
            turn[key] = rename(turn[key])
        turn["session_id"] = rename(turn["session_id"])
        if entry["summary"]:
            entry["summary"]["turn_id"] = rename(entry["summary"]["turn_id"])
        for call in entry["tool_calls"]:
            call["id"], call["turn_id"] = rename(call["id"]), rename(call["turn_id"])
    doc["session"]["head_turn_id"] = rename(doc["session"]["head_turn_id"])
    return doc


def test_json_round_trip_is_identical_modulo_ids(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = _conversation(db, make_turn)
    exported = export_session(db, sid, fmt="json")
    doc = json.loads(exported)
    assert doc["format_version"] == 1 and len(doc["turns"]) == 5

    new_sid = import_session(db, exported, labels=LABELS)
    assert new_sid != sid
    again = export_session(db, new_sid, fmt="json")
    assert _normalise(again) == _normalise(exported)
    old_ids = {t.id for t in branch(db, sid)}
    assert not old_ids & {t.id for t in branch(db, new_sid)}
    sticky = branch(db, new_sid)[2]
    assert sticky.tool_result_of == branch(db, new_sid)[1].id
    assert [c.status for c in tool_calls(db, branch(db, new_sid)[1].id)] == ["ok", "error"]


def test_markdown_shows_the_current_branch_for_people(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = _conversation(db, make_turn)
    text = export_session(db, sid)
    assert text.startswith("# Trip planning\n")
    assert "### Assistant `L2` `manual` `remote`" in text
    assert "### Tool result" in text and "### Assistant `L1` `sticky`" in text
    assert r"\d{4}-\d{2}" in text
    assert "\nold\n" not in text  # the retried answer is on another branch
    assert "user wants a trip" not in text  # summaries stay out of the chat
    assert "<details><summary>Tool calls (2)</summary>" in text
    assert "````\n```py\nweather()\n```\n````" not in text  # answers are not fenced
    assert text.count("### You") == 3


def test_markdown_fences_code_containing_backticks(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = create_session(db).id
    call = NewToolCall(step=0, label="L1", code="print('```')", result="```", status="ok")
    commit_turn(db, sid, make_turn(), [call], expected_head=None)
    assert "````python\nprint('```')\n````" in export_session(db, sid)


def _break(doc: dict[str, Any], how: str) -> dict[str, Any]:
    if how == "version":
        doc["format_version"] = 99
    elif how == "missing":
        del doc["turns"][1]["turn"]["answer"]
    elif how == "parent":
        doc["turns"][1]["turn"]["parent_id"] = "ghost"
    elif how == "head":
        doc["session"]["head_turn_id"] = "ghost"
    elif how == "route_kind":
        doc["turns"][0]["turn"]["route_kind"] = "psychic"
    elif how == "duplicate":
        doc["turns"][1]["turn"]["id"] = doc["turns"][0]["turn"]["id"]
    elif how == "label":
        doc["turns"][2]["turn"]["label"] = "L9"
    elif how == "summary_label":
        doc["turns"][0]["summary"]["label"] = "anything"
    elif how == "probs":
        doc["turns"][0]["turn"]["route_probs"] = {"L0": 0.5, "L7": 0.5}
    elif how == "call_label":
        doc["turns"][1]["tool_calls"][0]["label"] = "L9"
    elif how == "surrogate":
        doc["session"]["title"] = "\ud800"
    return doc


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("version", "format_version 99"),
        ("missing", r"turns\.1\.turn\.answer: Field required"),
        ("parent", r"turns\.1\.parent_id 'ghost'"),
        ("head", "head_turn_id 'ghost'"),
        ("route_kind", r"turns\.0\.turn\.route_kind"),
        ("duplicate", "not unique"),
        ("label", r"turns\.2\.turn\.label: label 'L9' is not one of this profile's"),
        ("summary_label", r"turns\.0\.summary\.label: label 'anything'"),
        ("probs", r"turns\.0\.turn\.route_probs: label 'L7'"),
        ("call_label", r"turns\.1\.tool_calls: label 'L9'"),
        ("surrogate", "not valid Unicode"),
    ],
)
def test_bad_import_names_the_problem_and_writes_nothing(
    db: sqlite_utils.Database,
    make_turn: Callable[..., NewTurn],
    counts: Counts,
    how: str,
    message: str,
) -> None:
    sid = _conversation(db, make_turn)
    doc = _break(json.loads(export_session(db, sid, fmt="json")), how)
    before = counts(db)
    with pytest.raises(StoreError, match=message):
        import_session(db, json.dumps(doc), labels=LABELS)
    assert counts(db) == before


DEEP = '{"format_version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize(
    "text", ["", "not json", "[1, 2]", '{"format_version": 1}', DEEP], ids=str.__len__
)
def test_import_of_garbage_is_a_store_error(db: sqlite_utils.Database, text: str) -> None:
    with pytest.raises(StoreError, match="import"):
        import_session(db, text, labels=LABELS)


def test_export_of_an_unknown_session_or_format(db: sqlite_utils.Database) -> None:
    sid = create_session(db).id
    with pytest.raises(StoreError, match="no session"):
        export_session(db, "missing", fmt="json")
    with pytest.raises(StoreError, match="unknown export format"):
        export_session(db, sid, fmt="html")  # type: ignore[arg-type]
    copy = import_session(db, export_session(db, sid, fmt="json"), labels=LABELS)
    assert get_session(db, copy).title == ""
