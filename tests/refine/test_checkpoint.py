"""A base's own training checkpoint (the manifest's ``[training]``), from a local stand-in of the
hub: fetched once and verified, loaded by transformers instead of the GGUF, refused when it is
another network, and what ``refine train`` trains on for a profile whose base names one.

The checkpoint is the embedded base itself as transformers reads it, saved as bf16 safetensors,
so it is the served GGUF's network for real.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from macaron_local.errors import RefineError
from tests.model_manager.hub import COMMIT, Hub, start_hub
from tests.refine.helpers import CHAT

pytest.importorskip("peft")

REPO = "someone/smollm2-135m-instruct"
TOKENS = list(range(100, 164))


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, model_path: Path) -> dict[str, Any]:
    """The checkpoint's files, and the logits of the GGUF-loaded model they were saved from."""
    from macaron_local.refine.hf import HFBase

    out = tmp_path_factory.mktemp("checkpoint")
    base = HFBase.load(model_path, "llama", on="cpu")
    with torch.no_grad():
        logits = base.logits(base.hidden(torch.tensor([TOKENS])))[0].numpy()
    from safetensors.torch import save_model

    config = base.hf.config.to_dict()
    config.pop("quantization_config", None)  # transformers marks a GGUF load as quantized
    save_model(base.hf.to(torch.bfloat16), str(out / "model.safetensors"))
    files = {"config.json": json.dumps(config).encode()}
    files["model.safetensors"] = (out / "model.safetensors").read_bytes()
    return {"files": files, "logits": logits}


@pytest.fixture
def hub(published: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    h, server = start_hub()
    for name, data in published["files"].items():
        h.files[(REPO, name)] = data
    monkeypatch.setenv("HF_ENDPOINT", h.url)
    yield h
    server.shutdown()
    server.server_close()


@pytest.fixture
def manifest(model_path: Path, _isolated_home: Path) -> Any:
    from macaron_local.model_manager.add import add_model

    return add_model(model_path, "smol-trained", train_from=f"{REPO}@{COMMIT}")


def test_the_checkpoint_is_fetched_once_and_loaded_instead_of_the_gguf(
    hub: Hub, manifest: Any, model_path: Path, published: dict[str, Any]
) -> None:
    from macaron_local.model_manager.checkpoint import fetch_checkpoint
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.hf import HFBase

    assert manifest.training.repo == REPO and manifest.training.revision == COMMIT
    folder = fetch_checkpoint(manifest, progress=False)
    assert sorted(p.name for p in folder.iterdir() if p.is_file()) == [
        "config.json",
        "model.safetensors",
    ]
    assert all(f"/{REPO}/resolve/{COMMIT}/" in path for _, path, _ in hub.gets())
    n = len(hub.gets())
    assert fetch_checkpoint(manifest, progress=False) == folder and len(hub.gets()) == n
    model = load_base(model_path, weights=folder)  # llama, but the checkpoint: transformers
    assert isinstance(model, HFBase)
    with torch.no_grad():
        got = model.logits(model.hidden(torch.tensor([TOKENS])))[0].numpy()
    want = published["logits"]
    assert np.corrcoef(got.ravel(), want.ravel())[0, 1] > 0.999  # bf16 weights vs f32
    assert (got.argmax(-1) == want.argmax(-1)).mean() >= 0.9


def test_a_checkpoint_of_another_network_is_refused_naming_both(
    hub: Hub, manifest: Any, model_path: Path, tmp_path: Path
) -> None:
    from macaron_local.model_manager.checkpoint import fetch_checkpoint
    from macaron_local.refine.arch import load_base

    other = tmp_path / "other"
    shutil.copytree(fetch_checkpoint(manifest, progress=False), other)
    cfg = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**cfg, "num_hidden_layers": 2}))
    with pytest.raises(RefineError, match="576/2/49152 there, 576/30/49152 in the GGUF"):
        load_base(model_path, weights=other)


def test_a_missing_checkpoint_is_a_clear_error(
    hub: Hub, manifest: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from macaron_local.errors import ModelNotFoundError
    from macaron_local.model_manager.checkpoint import fetch_checkpoint

    hub.files.pop((REPO, "model.safetensors"))
    with pytest.raises(ModelNotFoundError, match="model.safetensors"):
        fetch_checkpoint(manifest, progress=False)


def test_refine_train_on_that_base_trains_from_its_checkpoint(
    hub: Hub, manifest: Any, model_path: Path, tmp_path: Path
) -> None:
    from macaron_local.engine.engine import Engine, EngineConfig
    from macaron_local.hcp.new import new_profile
    from macaron_local.refine.cli import refine

    new_profile("trained", manifest.id)
    data = tmp_path / "chat.jsonl"
    data.write_text(json.dumps(CHAT) + "\n")
    out = tmp_path / "L0.gguf"
    args = ["train", "L0", str(data), str(out), "--profile", "trained", "--steps", "1"]
    args += ["--batch-size", "1", "--rank", "2", "--max-len", "256", "--quiet"]
    result = CliRunner().invoke(refine, args)
    assert result.exit_code == 0, result.output
    assert "plan: transformers+peft" in result.output  # a llama base, trained from the checkpoint
    assert any(path.endswith("/model.safetensors") for _, path, _ in hub.gets())
    with Engine(model_path, EngineConfig(n_ctx=256, n_threads=1)) as engine:
        engine.load_adapter("ckpt", out, base_sha256=manifest.sha256)
        assert engine.eval_logits(TOKENS[:8], adapter="ckpt").shape[-1] == 49152
