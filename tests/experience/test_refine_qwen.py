"""The learning loop on a base that is not llama: ``refine run`` for a user's profile whose base
is a tiny random qwen2 (built here, no download) trains on the transformers + peft backend,
exports a qwen2 GGUF LoRA for that base, and gates it on the served engine over that GGUF."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local import experience
from tests.experience.helpers import commit, new_session, open_store

pytest.importorskip("peft")


@pytest.mark.timeout(900)
def test_refine_run_learns_on_a_qwen2_base(
    tmp_path: Path, model_path: Path, _isolated_home: Path
) -> None:
    from macaron_local import lineage
    from macaron_local.engine.lora_io import read_lora
    from macaron_local.hcp import load_profile
    from macaron_local.hcp.new import new_profile
    from macaron_local.model_manager.add import add_model
    from macaron_local.refine.gate import GateConfig
    from macaron_local.refine.refine_loop import RefineConfig, run_refine
    from tests.refine.tiny_hf import build_base

    _, gguf = build_base("qwen2", tmp_path / "tiny-qwen2.gguf", model_path)
    base = add_model(gguf, "tiny-qwen2")
    new_profile("qwen-user", base.id)
    profile = load_profile("qwen-user")
    experience.set_user_choice(True)
    db = open_store(tmp_path)
    sid = new_session(db)
    for q, a in [("What is my dog's name?", "Biscuit."), ("Where do I live?", "Tromso.")] * 3:
        t = commit(db, sid, q, "I don't know.")
        experience.record_turn(db, profile, t)
        experience.record_feedback(db, profile, t.id, "correction", a)
    cfg = RefineConfig(
        steps=1, batch_size=2, dpo_batch=1, replay_ratio=0.5, heldout_fraction=0.34,
        gate=GateConfig(regression_limit=2),
    )  # fmt: skip
    lines: list[str] = []
    report = run_refine("L0", profile=profile, db=db, config=cfg, echo=lines.append)
    assert report.status in ("promoted", "kept"), (report.status, report.reasons, lines)
    rev = lineage.get_revision(report.revision)
    lora = read_lora(rev.path)
    assert lora.arch == "qwen2" and lora.base_sha256 == base.sha256 == rev.base_sha256
    assert "tiny-qwen2" in report.measured_on  # gated on the served engine over that GGUF
    assert rev.metrics["gate_passed"] is report.gate_passed
