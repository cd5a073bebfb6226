"""``macaron hcp`` through click's CliRunner: validate, list, show, diff, approve."""

from __future__ import annotations

import json
import tomllib

from click.testing import CliRunner

from macaron_local import paths
from macaron_local.hcp import approvals, load_profile
from macaron_local.hcp.cli import hcp


def _run(*args: str, input: str | None = None):
    return CliRunner().invoke(hcp, list(args), input=input)


def test_validate_all_and_by_path(write_file, bundled_doc) -> None:
    result = _run("validate")
    assert result.exit_code == 0, result.output
    assert result.output.count("ok    ") == 3
    assert load_profile("hybrid").content_hash in result.output
    doc = bundled_doc()
    doc["router"]["fallback"] = "L9"
    bad = write_file("bad.toml", doc)
    result = _run("validate", "tall-local", str(bad))
    assert result.exit_code == 1
    assert "FAIL" in result.output and "router.fallback" in result.output
    assert "1 of 2 profile(s) are invalid" in result.output
    assert "Traceback" not in result.output


def test_list_marks_overrides(write_user, bundled_doc) -> None:
    write_user("tall-local", bundled_doc())
    result = _run("list")
    assert result.exit_code == 0
    line = next(ln for ln in result.output.splitlines() if ln.startswith("tall-local"))
    assert "user" in line and "overrides the bundled one" in line


def test_show_toml_and_json() -> None:
    profile = load_profile("hybrid")
    result = _run("show", "hybrid")
    assert result.exit_code == 0
    assert f"# content hash: {profile.content_hash}" in result.output
    shown = tomllib.loads(result.output)
    assert shown["remote"]["enabled"] is True and "prompts" in shown  # resolved, not the layer
    result = _run("show", "hybrid", "--json")
    data = json.loads(result.output)
    assert (
        data["content_hash"] == profile.content_hash
        and data["profile"]["profile"]["id"] == "hybrid"
    )


def test_show_unknown_profile_is_a_message_not_a_traceback() -> None:
    result = _run("show", "nope")
    assert result.exit_code == 1
    assert "no profile named 'nope'" in result.output and "Traceback" not in result.output


def test_diff_marks_a_widened_allowlist(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["tools"]["allow"]["L2"] = ["shell.run"]
    doc["prompts"]["L2"]["system"] = "Code."
    wide = write_file("wide.toml", doc)
    result = _run("diff", "tall-local", str(wide))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    allow = next(ln for ln in lines if "tools.allow.L2" in ln)
    assert allow.startswith("! ") and "SECURITY" in allow and "shell.run" in allow
    prompt = next(ln for ln in lines if "prompts.L2.system" in ln)
    assert prompt.startswith("  ") and "SECURITY" not in prompt
    assert lines[-1] == "2 change(s), 1 security-relevant"


def test_approve_records_in_the_store(write_user) -> None:
    write_user(
        "mine",
        {
            "schema_version": 1,
            "extends": "tall-local",
            "profile": {"id": "mine", "version": "1"},
            "experience": {"opt_in": True},
        },
    )
    result = _run(
        "approve", "mine", "--who", "carol", "--note", "I want to help train it", input="n\n"
    )
    assert result.exit_code == 1 and "experience.opt_in" in result.output  # aborted
    result = _run(
        "approve", "mine", "--who", "carol", "--note", "I want to help train it", input="y\n"
    )
    assert result.exit_code == 0, result.output
    assert "approved mine" in result.output
    from macaron_local.store.db import open_db

    db = open_db(paths.db_path())
    try:
        [record] = approvals(db, "mine")
    finally:
        db.close()
    assert (record.approved_by, record.note) == ("carol", "I want to help train it")
    assert record.content_hash == load_profile("mine").content_hash
