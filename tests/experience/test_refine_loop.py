"""The refine loop on the real embedded base: a failed gate and a cancel change no lineage; the
gate measures on the served engine (llama.cpp over the profile's base)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from macaron_local import experience
from macaron_local.hcp import load_profile
from tests.experience.helpers import commit, new_session, open_store

pytest.importorskip("torch")

FACTS = [
    ("What is my dog's name?", "Your dog is called Biscuit."),
    ("Where do I live?", "You live in Tromsø."),
    ("What's my favourite colour?", "Your favourite colour is teal."),
    ("What is my job?", "You are a beekeeper."),
    ("When is my birthday?", "Your birthday is on 12 March."),
    ("What do I drink in the morning?", "You drink green tea."),
]


@pytest.fixture
def corrected(tmp_path: Path):
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    profile = load_profile("tall-local")
    sid = new_session(db)
    for q, a in FACTS:
        t = commit(db, sid, q, "I don't know.")
        experience.record_turn(db, profile, t)
        experience.record_feedback(db, profile, t.id, "correction", a)
    return db, profile


def _config(**gate):
    import torch  # noqa: F401 - the loop module needs it

    from macaron_local.refine.gate import GateConfig
    from macaron_local.refine.refine_loop import RefineConfig

    return RefineConfig(
        steps=1,
        batch_size=2,
        dpo_batch=1,
        replay_ratio=0.5,
        heldout_fraction=0.34,
        gate=GateConfig(regression_limit=3, **gate),
    )


@pytest.mark.timeout(3600)  # two measured passes of the base on a shared CPU
def test_failed_gate_leaves_the_policy_record_unchanged(corrected) -> None:
    from macaron_local import lineage
    from macaron_local.manifests import get_manifest
    from macaron_local.refine.refine_loop import run_refine

    db, profile = corrected
    before = (
        lineage.policy_path(profile.id).read_bytes()
        if lineage.policy_path(profile.id).exists()
        else None
    )
    report = run_refine(
        "L0", profile=profile, db=db, config=_config(min_gain=100.0), echo=lambda s: None
    )
    assert report.status == "kept" and not report.gate_passed
    assert any("improved by more than 100.0" in r for r in report.reasons)
    after = (
        lineage.policy_path(profile.id).read_bytes()
        if lineage.policy_path(profile.id).exists()
        else None
    )
    assert after == before
    rev = lineage.get_revision(report.revision)
    assert rev.label == "L0" and rev.metrics["gate_passed"] is False
    assert rev.config["gate"]["max_regression"] == profile.experience.max_regression  # its gate
    assert rev.metrics["gate_reasons"] == report.reasons
    assert rev.metrics["measured_on"] == report.measured_on  # the served engine, by name
    assert get_manifest(profile.base.model).id in report.measured_on
    assert Path(report.report_json).is_file()
    assert {Path(p).name for p in report.plots} == {"loss.png", "reward.png", "gate.png"}


@pytest.mark.timeout(3600)
def test_cancelled_run_registers_nothing_and_resumes(corrected) -> None:
    from macaron_local import lineage
    from macaron_local.refine.refine_loop import _resume_path, run_refine

    db, profile = corrected
    cancel = threading.Event()
    report = run_refine(
        "L0",
        profile=profile,
        db=db,
        config=_config().model_copy(update={"steps": 3}),
        cancel=cancel,
        echo=lambda s: None,
        on_step=lambda step, total: cancel.set(),  # the user cancels after the first step
    )
    assert report.status == "cancelled" and report.revision is None and report.steps == 1
    assert lineage.store_snapshot() == {}  # no revision, not even a partial file
    assert lineage.get_policy(profile.id).serving == {}
    assert _resume_path(report.run_id).is_file()  # trainer state waits in the cache
    assert not any(lineage.adapters_dir().parent.glob("adapters/*.part"))


@pytest.mark.timeout(1800)
def test_a_cancel_during_the_gate_registers_nothing_and_keeps_the_training(corrected) -> None:
    """The cancel comes while the gate measures on the served engine (minutes on a busy
    machine): its next request ends the run, nothing is registered, and the trained state
    waits, so the same run started again goes straight to the gate."""
    from macaron_local import lineage
    from macaron_local.manifests import get_manifest
    from macaron_local.refine.refine_loop import _resume_path, run_refine

    db, profile = corrected
    cancel = threading.Event()
    lines: list[str] = []

    def echo(line: str) -> None:  # printed just before the gate starts measuring
        lines.append(line)
        if "gate on the served engine" in line:
            cancel.set()

    report = run_refine("L0", profile=profile, db=db, config=_config(), cancel=cancel, echo=echo)
    assert report.status == "cancelled" and report.revision is None and report.before == {}
    assert not any("gate metrics" in line for line in lines)
    assert lineage.store_snapshot() == {}
    assert _resume_path(report.run_id).is_file()
    manifest = get_manifest(profile.base.model)
    assert any(manifest.id in line and manifest.quantization in line for line in lines)

    lines.clear()
    again = run_refine("L0", profile=profile, db=db, config=_config(), echo=lines.append)
    assert any(line.startswith("  resuming") and "at step 1" in line for line in lines)
    assert not any(line.startswith("  step ") for line in lines)  # no step trained twice
    assert again.revision is not None and again.status in ("kept", "promoted")
    assert again.measured_on in again.summary and manifest.id in again.measured_on
    assert not _resume_path(again.run_id).exists()  # gone once the revision is registered


def test_a_run_cancelled_before_it_starts_reads_no_weights(corrected) -> None:
    from macaron_local.refine.refine_loop import run_refine

    db, profile = corrected
    cancel = threading.Event()
    cancel.set()
    lines: list[str] = []
    report = run_refine(
        "L0", profile=profile, db=db, config=_config(), cancel=cancel, echo=lines.append
    )
    assert report.status == "cancelled" and report.steps == 0
    assert lines == []  # it stopped while reading the base, before the model was built
