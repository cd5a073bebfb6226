"""`macaron refine ...` through click: lineage commands, train and a tiny bootstrap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from macaron_local import lineage, paths
from macaron_local.engine.lora_io import read_lora, write_lora
from macaron_local.manifests import get_manifest, load_manifest, sha256_file
from macaron_local.refine.bootstrap import update_manifest
from macaron_local.refine.cli import refine

ROWS = {
    "route": [
        {"text": "how are you?", "label": "L0"},
        {"text": "remind me to stretch at 3pm", "label": "L1"},
        {"text": "regex for a US zip code", "label": "L2"},
        {"text": "let me pick a laptop from three", "label": "L3"},
    ],
    "chat": [
        {
            "messages": [
                {"role": "user", "content": "Hi!"},
                {"role": "assistant", "content": "Hello! How can I help?"},
            ]
        }
    ],
    "agent": [
        {
            "messages": [
                {"role": "user", "content": "What time is it?"},
                {"role": "assistant", "content": "```repl\nprint(clock.now())\n```"},
                {"role": "tool", "content": "09:30"},
                {"role": "assistant", "content": "It is 09:30."},
            ]
        }
    ],
    "code": [
        {
            "messages": [
                {"role": "user", "content": "Reverse a list in Python."},
                {"role": "assistant", "content": "```python\nxs[::-1]\n```"},
            ]
        }
    ],
    "genui": [
        {
            "messages": [
                {"role": "user", "content": "Help me choose a color."},
                {"role": "assistant", "content": '{"type": "choice"}'},
            ]
        }
    ],
    "summary": [
        {
            "label": f"L{i}",
            "request": "hi",
            "answer": "hello",
            "summary": "The user greeted; the assistant greeted back.",
        }
        for i in range(4)
    ],
}


def _data(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for kind, rows in ROWS.items():
        (folder / f"{kind}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_bootstrap_trains_registers_and_writes_the_manifest(tmp_path: Path) -> None:
    shipped = get_manifest().manifest_path
    manifest = tmp_path / "models" / shipped.name
    manifest.parent.mkdir()
    shutil.copy(shipped, manifest)
    data = _data(tmp_path / "data")
    result = CliRunner().invoke(
        refine,
        [
            "bootstrap",
            "--data-dir",
            str(data),
            "--manifest",
            str(manifest),
            "--steps",
            "2",
            "--batch-size",
            "2",
            "--max-len",
            "640",  # L1's system prompt alone is ~450 tokens since it lists the functions
            "--rank",
            "2",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    m = load_manifest(manifest)
    assert [a.label for a in m.adapters] == ["L0", "L1", "L2", "L3"]
    for a in m.adapters:
        path = m.adapter_path(a)
        assert path.parent == manifest.parent / "adapters"
        assert sha256_file(path) == a.sha256 == a.revision
        assert a.size == path.stat().st_size and a.rank == 2
        assert a.base_sha256 == get_manifest().sha256 == read_lora(path).base_sha256
        assert (path.parent / f"{a.label}.run.json").is_file()
        assert (path.parent / f"{a.label}.loss.png").is_file()
        record = json.loads(path.with_suffix(".json").read_text())
        assert record["revision"] == a.revision and record["profile_hash"]
    assert "# The four default specialists" in manifest.read_text()  # comments kept
    assert {r.label for r in lineage.list_revisions()} == {"L0", "L1", "L2", "L3"}
    assert "L3" in result.output and "revision" in result.output
    assert not list((paths.data_dir() / "adapters").glob("*.pt"))


def test_train_command_then_log_promote_rollback(tmp_path: Path) -> None:
    data = tmp_path / "route.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS["route"]))
    runner = CliRunner()
    out = tmp_path / "out" / "L0.gguf"
    result = runner.invoke(
        refine,
        [
            "train",
            "L0",
            str(data),
            str(out),
            "--steps",
            "1",
            "--batch-size",
            "4",
            # route rows are ~300 tokens; the plan's memory estimate counts max_len, and at the
            # default 1024 (7.1 GiB) a busy machine's free memory refused the run
            "--max-len",
            "512",
            "--rank",
            "2",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert out.is_file() and "registered revision" in result.output
    (rev,) = lineage.list_revisions("L0")
    result = runner.invoke(refine, ["promote", "L0", rev.revision[:8]])
    assert result.exit_code == 0 and rev.revision[:12] in result.output
    result = runner.invoke(refine, ["log", "--json"])
    assert json.loads(result.output)["serving"] == {"L0": rev.revision}
    assert runner.invoke(refine, ["log", "--label", "L0"]).output.startswith("* L0")
    result = runner.invoke(refine, ["rollback", "L0"])
    assert result.exit_code == 0 and "profile default" in result.output
    result = runner.invoke(refine, ["rollback", "L0"])
    assert result.exit_code == 1 and "nothing to roll back" in result.output


def test_the_plan_counts_the_steps_that_epochs_make_and_a_short_max_len_says_why(
    tmp_path: Path,
) -> None:
    data = tmp_path / "route.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS["route"]))
    n = len(ROWS["route"])
    args = ["train", "L0", str(data), str(tmp_path / "L0.gguf"), "--batch-size", "2"]
    args += ["--rank", "2", "--quiet"]
    result = CliRunner().invoke(refine, [*args, "--epochs", "1", "--max-len", "512"])
    assert result.exit_code == 0, result.output
    assert f" {-(-n // 2)} steps, " in result.output  # not the default --steps
    result = CliRunner().invoke(refine, [*args, "--steps", "1", "--max-len", "64"])
    assert result.exit_code == 1 and "max_len (64 tokens)" in result.output
    assert "raise --max-len" in result.output and "Traceback" not in result.output


def test_update_manifest_replaces_the_label_entry(tmp_path: Path) -> None:
    manifest = tmp_path / "m.toml"
    shipped = get_manifest().manifest_path.read_text()
    manifest.write_text(shipped.split("[[adapters]]")[0])  # the base without its specialists
    a = np.zeros((2, 576), np.float32)
    gguf = write_lora(tmp_path / "x.gguf", {"blk.0.attn_q.weight": (a, a.T.copy())}, alpha=2)
    entry = {
        "label": "L1",
        "role": "agent",
        "file": "x.gguf",
        "sha256": "1" * 64,
        "size": gguf.stat().st_size,
        "rank": 2,
        "alpha": 2.0,
        "targets": ["attn_q"],
        "base_sha256": "2" * 64,
        "revision": "1" * 64,
    }
    update_manifest(manifest, entry)
    update_manifest(manifest, {**entry, "label": "L0"})
    update_manifest(manifest, {**entry, "sha256": "3" * 64, "revision": "3" * 64})
    m = load_manifest(manifest)
    assert [(x.label, x.revision[0]) for x in m.adapters] == [("L0", "1"), ("L1", "3")]
    assert m.sha256 == get_manifest().sha256
