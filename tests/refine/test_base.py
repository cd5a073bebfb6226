"""Training follows the profile's base, and an adapter made for another base is refused.

The second base is real: the embedded model written again as F32 (another file, another
sha256, the same architecture), registered as a user model, and a user profile on it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from macaron_local.errors import AdapterMismatchError, RefineError
from macaron_local.manifests import EMBEDDED_ID, get_manifest, sha256_file

OTHER = "smollm2-135m-f32"


@pytest.fixture
def mine(f32_base: Path, _isolated_home: Path) -> Path:
    """A user model manifest for the F32 base and a user profile ``mine`` that serves it."""
    models = _isolated_home / "data" / "models"
    models.mkdir(parents=True)
    (models / f"{OTHER}.toml").write_text(
        f'schema_version = 1\nid = "{OTHER}"\nname = "SmolLM2-135M-Instruct (F32)"\n'
        f'architecture = "llama"\nlicense = "Apache-2.0"\ncontext_length = 8192\n'
        f'sha256 = "{sha256_file(f32_base)}"\nsize = {f32_base.stat().st_size}\n'
        f'[source]\nkind = "path"\npath = "{f32_base.parent}"\nfile = "{f32_base.name}"\n'
    )
    profiles = _isolated_home / "config" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "mine.toml").write_text(
        'schema_version = 1\nextends = "tall-local"\n[profile]\nid = "mine"\n'
        f'[base]\nmodel = "{OTHER}"\n'
        + "".join(f'[adapters.{lb}]\nrevision = "none"\n' for lb in ("L0", "L1", "L2", "L3"))
    )
    return f32_base


def _register_bundled_l0() -> Any:
    """The shipped L0 (trained on the embedded Q4_1 base) as a lineage revision."""
    from macaron_local import lineage

    m = get_manifest(EMBEDDED_ID)
    return lineage.register_revision(
        m.adapter_path(m.adapter("L0")), label="L0", base_sha256=m.sha256
    )


def test_training_base_is_the_profiles(mine: Path) -> None:
    from macaron_local.adapter_base import training_base
    from macaron_local.hcp import load_profile

    tb = training_base(load_profile("mine"))
    assert tb.path == mine and tb.sha256 == sha256_file(mine) and tb.name == OTHER
    default = training_base(load_profile("tall-local"))
    assert default.sha256 == get_manifest(EMBEDDED_ID).sha256 != tb.sha256
    override = training_base(load_profile("tall-local"), mine)  # --base only overrides
    assert override.sha256 == tb.sha256 and override.manifest is None


def test_promote_refuses_an_adapter_of_another_base_and_names_both(mine: Path) -> None:
    from macaron_local import lineage

    rev = _register_bundled_l0()
    with pytest.raises(AdapterMismatchError) as err:
        lineage.promote("mine", "L0", rev.revision)
    said = str(err.value)
    assert OTHER in said and get_manifest(EMBEDDED_ID).sha256[:12] in said
    assert lineage.get_policy("mine").serving == {}  # nothing changed
    assert lineage.promote("tall-local", "L0", rev.revision).serving["L0"] == rev.revision


def test_promote_reads_the_architecture_from_the_adapter_header(tmp_path: Path) -> None:
    from macaron_local import lineage
    from macaron_local.engine.lora_io import write_lora

    a, b = np.zeros((2, 576), np.float32), np.zeros((576, 2), np.float32)
    path = write_lora(tmp_path / "q.gguf", {"blk.0.attn_q.weight": (a, b)}, alpha=4, arch="qwen2")
    rev = lineage.register_revision(path, label="L0")  # no base recorded: the header decides
    with pytest.raises(AdapterMismatchError, match="architecture 'qwen2'"):
        lineage.promote("tall-local", "L0", rev.revision)


def test_load_base_refuses_an_unsupported_architecture_before_reading_tensors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gguf

    from macaron_local.refine import weights
    from macaron_local.refine.arch import load_base

    path = tmp_path / "tiny.gguf"  # a (tiny) model of an architecture no backend can train
    writer = gguf.GGUFWriter(str(path), "nosucharch")
    writer.add_context_length(64)
    writer.add_tensor("token_embd.weight", np.zeros((16, 8), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    def no_tensors(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("tensors were dequantized before the architecture was checked")

    monkeypatch.setattr(weights, "read_weights", no_tensors)
    with pytest.raises(RefineError, match="architecture 'nosucharch' has no torch model"):
        load_base(path)


def test_doctor_fails_an_adapter_made_for_another_base(mine: Path) -> None:
    from macaron_local import lineage

    rev = _register_bundled_l0()
    # as an older version (or a hand edit) could leave it: the policy names a foreign adapter
    lineage._save(lineage.Policy(profile_id="mine", serving={"L0": rev.revision}))
    l0 = _doctor("mine")["adapter L0"]
    assert l0["level"] == "fail", l0
    assert "trained on base" in l0["detail"] and OTHER in l0["detail"]


def test_refine_train_trains_the_profiles_base(mine: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from macaron_local.engine.lora_io import read_lora
    from macaron_local.refine.cli import refine

    data = tmp_path / "route.jsonl"
    rows = [{"text": "how are you?", "label": "L0"}, {"text": "remind me at 3pm", "label": "L1"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "L0.gguf"
    args = ["train", "L0", str(data), str(out), "--profile", "mine", "--steps", "1"]
    result = CliRunner().invoke(refine, [*args, "--batch-size", "2", "--rank", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert read_lora(out).base_sha256 == sha256_file(mine)  # not the embedded base's


def _doctor(profile: str) -> dict[str, dict[str, Any]]:
    out = _macaron("doctor", "--profile", profile, "--json").stdout.splitlines()
    checks = [json.loads(line) for line in out if line.startswith("{")]
    return {c["name"]: c for c in checks}


def _macaron(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(["macaron", *args], capture_output=True, text=True, env=env, timeout=900)


def test_models_add_refuses_what_is_not_a_model(tmp_path: Path) -> None:
    from macaron_local.manifests import manifests

    garbage = tmp_path / "notes.gguf"
    garbage.write_bytes(b"hello, not a model" * 10)
    adapter = get_manifest(EMBEDDED_ID).adapter_path(get_manifest(EMBEDDED_ID).adapter("L0"))
    for path, said in ((garbage, "not a GGUF file"), (adapter, "not a model")):
        done = _macaron("models", "add", str(path))
        assert done.returncode != 0 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert set(manifests()) == {m for m in manifests() if not m.startswith("notes")}
    done = _macaron("hcp", "new", "x", "--base", "no-such-model")
    assert done.returncode != 0 and "no-such-model" in done.stderr


@pytest.mark.slow
def test_a_users_own_base_in_four_commands(f32_base: Path) -> None:
    """models add -> hcp new -> refine bootstrap -> served: the adapters are for that base."""
    from macaron_local.hcp import load_profile
    from macaron_local.manifests import get_manifest, locate
    from macaron_local.turns import adapters as bindings

    done = _macaron("models", "add", str(f32_base), "--id", "my-base")
    assert done.returncode == 0, done.stderr
    assert "added my-base: llama" in done.stdout
    done = _macaron("hcp", "new", "mine2", "--base", "my-base")
    assert done.returncode == 0, done.stderr
    assert _macaron("hcp", "new", "mine2", "--base", "my-base").returncode != 0  # exists
    args = ["--labels", "L0", "--steps", "1", "--batch-size", "2", "--rank", "2"]
    done = _macaron("refine", "bootstrap", "--profile", "mine2", *args, "--max-len", "256")
    assert done.returncode == 0, done.stderr
    m = get_manifest("my-base")
    assert locate(m) == f32_base and [a.label for a in m.adapters] == ["L0"]
    assert m.adapters[0].base_sha256 == sha256_file(f32_base) == m.sha256
    served = bindings.resolve(load_profile("mine2"), m)["L0"]  # promoted for the profile
    assert served.revision == m.adapters[0].revision and served.path.is_file()
    assert _doctor("mine2")["adapter L0"]["level"] == "ok"
