"""The semantic diff and which changes count as security-relevant."""

from __future__ import annotations

from macaron_local.hcp import diff_profiles, load_profile


def _changes(write_file, bundled_doc, mutate):
    doc = bundled_doc()
    mutate(doc)
    base = load_profile("tall-local")
    return {c.path: c for c in diff_profiles(base, load_profile(write_file("p.toml", doc)))}


def test_identical_profiles_have_no_changes() -> None:
    assert diff_profiles(load_profile("tall-local"), load_profile("tall-local")) == []


def test_widened_allowlist_is_security_relevant(write_file, bundled_doc) -> None:
    def widen(doc):
        doc["tools"]["allow"]["L2"] = ["files.read", "shell.*"]

    change = _changes(write_file, bundled_doc, widen)["tools.allow.L2"]
    assert change.old == [] and change.new == ["files.read", "shell.*"]
    assert change.security_relevant and "files.read, shell.*" in change.reason
    assert change.describe().startswith("! tools.allow.L2") and "SECURITY" in change.describe()


def test_narrowing_or_covered_patterns_are_not(write_file, bundled_doc) -> None:
    def narrow(doc):
        doc["tools"]["allow"]["L1"] = ["notes.*", "reminders.add"]  # covered by the old "*"

    change = _changes(write_file, bundled_doc, narrow)["tools.allow.L1"]
    assert not change.security_relevant and change.describe().startswith("  ")


def test_repl_permissions_and_limits(write_file, bundled_doc) -> None:
    def widen(doc):
        doc["repl"].update(filesystem="home", network=True, subprocess=True)
        doc["repl"]["limits"]["memory_mb"] = 4096
        doc["repl"]["limits"]["cpu_seconds"] = 1.0  # lower: tighter, fine

    changes = _changes(write_file, bundled_doc, widen)
    for path in ("repl.filesystem", "repl.network", "repl.subprocess", "repl.limits.memory_mb"):
        assert changes[path].security_relevant, path
    assert not changes["repl.limits.cpu_seconds"].security_relevant

    def tighten(doc):
        doc["repl"]["filesystem"] = "none"

    assert not _changes(write_file, bundled_doc, tighten)["repl.filesystem"].security_relevant


def test_remote_and_experience(write_file, bundled_doc) -> None:
    def widen(doc):
        doc["remote"] = {
            "enabled": True,
            "endpoint": "https://venti.example.org/v1",
            "heavy": {"labels": ["L2", "L0"]},
        }
        doc["experience"] = {"opt_in": True, "retention_days": 365}

    changes = _changes(write_file, bundled_doc, widen)
    for path in (
        "remote.enabled",
        "remote.endpoint",
        "remote.heavy.labels",
        "experience.opt_in",
        "experience.retention_days",
    ):
        assert changes[path].security_relevant, path


def test_harmless_changes_are_listed_but_not_marked(write_file, bundled_doc) -> None:
    def edit(doc):
        doc["prompts"]["L0"]["system"] = "Be brief."
        doc["resources"]["n_ctx"] = 2048
        doc["experience"]["retention_days"] = 7

    changes = _changes(write_file, bundled_doc, edit)
    assert set(changes) == {"prompts.L0.system", "resources.n_ctx", "experience.retention_days"}
    assert not any(c.security_relevant for c in changes.values())


def test_hybrid_against_tall_local_marks_remote() -> None:
    changes = diff_profiles(load_profile("tall-local"), load_profile("hybrid"))
    risky = {c.path for c in changes if c.security_relevant}
    assert {"remote.enabled", "remote.endpoint_env", "remote.heavy.labels"} <= risky
    assert "profile.id" in {c.path for c in changes}
