"""``macaron models`` against a local hub: pull, resume, corruption, disk space, remove."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from macaron_local import paths
from macaron_local.model_manager import download
from macaron_local.model_manager.cli import models_group
from tests.model_manager.conftest import REPO, blob, write_manifest
from tests.model_manager.hub import Hub

SIZE = 3 << 20


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(models_group, list(args), env=env, catch_exceptions=False)


def model_path(model_id: str, name: str = "tiny.gguf") -> Path:
    return paths.data_dir() / "models" / model_id / name


def verified_cache() -> dict[str, str]:
    f = paths.cache_dir() / "verified.json"
    return json.loads(f.read_text()) if f.exists() else {}


def test_pull_downloads_verifies_and_lists(hub: Hub) -> None:
    base, adapter = blob(SIZE), blob(4096, seed=1)
    hub.files[(REPO, "tiny.gguf")] = base
    hub.files[(REPO, "adapters/L0.gguf")] = adapter
    write_manifest("tiny", base, adapters={"L0": adapter})
    done = run("pull", "tiny", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 0, done.output
    assert "2 file(s) verified" in done.output
    assert model_path("tiny").read_bytes() == base
    assert model_path("tiny", "adapters/L0.gguf").read_bytes() == adapter
    listed = [json.loads(line) for line in run("list", "--json").output.splitlines()]
    tiny = {r["role"]: r["state"] for r in listed if r["model"] == "tiny"}
    assert tiny == {"base": "present", "adapter L0": "present"}
    assert run("verify", "tiny").exit_code == 0
    again = run("pull", "tiny", "--endpoint", hub.url, "--no-progress")  # nothing to fetch
    assert again.exit_code == 0 and len(hub.gets()) == 2


def test_the_endpoint_comes_from_hf_endpoint(hub: Hub) -> None:
    base = blob(1000)
    hub.files[(REPO, "tiny.gguf")] = base
    write_manifest("tiny-env", base)
    done = run("pull", "tiny-env", "--no-progress", env={"HF_ENDPOINT": hub.url})
    assert done.exit_code == 0, done.output
    assert hub.requests[0][1] == f"/{REPO}/resolve/main/tiny.gguf"


def test_a_dropped_connection_resumes_with_range(hub: Hub) -> None:
    base = blob(SIZE)
    hub.files[(REPO, "tiny.gguf")] = base
    hub.drop_after, hub.drops = SIZE // 3, 1
    write_manifest("tiny-drop", base)
    done = run("pull", "tiny-drop", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 0, done.output
    first, second = hub.gets()
    assert first[2] is None and second[2] == f"bytes={SIZE // 3}-"
    assert (
        hashlib.sha256(model_path("tiny-drop").read_bytes()).digest()
        == hashlib.sha256(base).digest()
    )


def test_an_interrupted_pull_resumes_on_the_next_run(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "RETRIES", 2)
    monkeypatch.setattr(download.time, "sleep", lambda s: None)
    base = blob(SIZE)
    hub.files[(REPO, "tiny.gguf")] = base
    write_manifest("tiny-stop", base)
    # first run: the body is cut at half, then every retry finds the hub gone
    hub.drop_after, hub.drops, hub.refuse_after = SIZE // 2, 1, 1
    done = run("pull", "tiny-stop", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 1
    assert "stopped at" in done.output and "resumes from where it stopped" in done.output
    part = model_path("tiny-stop", "tiny.gguf.part")
    assert part.stat().st_size == SIZE // 2
    assert not model_path("tiny-stop").exists()
    # second run: the hub is back; the pull asks only for the rest
    hub.refuse_after = None
    n = len(hub.gets())
    done = run("pull", "tiny-stop", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 0, done.output
    assert [g[2] for g in hub.gets()[n:]] == [f"bytes={SIZE // 2}-"]
    assert model_path("tiny-stop").read_bytes() == base and not part.exists()


def test_a_corrupt_download_is_deleted_and_never_verified(hub: Hub) -> None:
    good, bad = blob(SIZE), blob(SIZE, seed=9)
    hub.files[(REPO, "tiny.gguf")] = bad  # same size, other bytes
    write_manifest("tiny-bad", good)
    done = run("pull", "tiny-bad", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 1
    assert "sha256 does not match the manifest" in done.output and "deleted" in done.output
    assert not model_path("tiny-bad").exists()
    assert not model_path("tiny-bad", "tiny.gguf.part").exists()
    assert not any("tiny-bad" in key for key in verified_cache())
    check = run("verify", "tiny-bad")
    assert check.exit_code == 1 and "missing" in check.output


def test_not_enough_disk_space_is_refused_before_downloading(hub: Hub) -> None:
    huge = 1 << 60  # an exbibyte: no test machine has that much free
    hub.files[(REPO, "tiny.gguf")] = blob(1000)
    write_manifest("tiny-huge", blob(1000), size=huge)
    mismatch = run("pull", "tiny-huge", "--endpoint", hub.url, "--no-progress")
    assert mismatch.exit_code == 1
    assert "the hub's tiny.gguf has 1000 bytes, the manifest says" in mismatch.output
    hub.sizes["tiny.gguf"] = huge  # now hub and manifest agree on the size
    done = run("pull", "tiny-huge", "--endpoint", hub.url, "--no-progress")
    assert done.exit_code == 1 and "not enough disk space" in done.output
    assert "hint:" in done.output
    assert hub.gets() == []  # refused before the first byte


def test_unknown_file_and_unpublished_model_errors_say_what_to_do(hub: Hub) -> None:
    write_manifest("tiny-404", blob(10))
    done = run("pull", "tiny-404", "--endpoint", hub.url, "--no-progress")
    assert (
        done.exit_code == 1 and "the hub has no test-org/tiny-model@main/tiny.gguf" in done.output
    )
    done = run("pull", "macaron-v1-tall", "--endpoint", hub.url)
    assert done.exit_code == 1 and "not published yet" in done.output
    assert "hint:" in done.output


def test_remove_deletes_downloads_only(hub: Hub) -> None:
    base = blob(1000)
    hub.files[(REPO, "tiny.gguf")] = base
    write_manifest("tiny-rm", base)
    assert run("pull", "tiny-rm", "--endpoint", hub.url, "--no-progress").exit_code == 0
    done = run("remove", "tiny-rm", "--yes")
    assert done.exit_code == 0 and not model_path("tiny-rm").exists()
    refused = run("remove", "smollm2-135m-instruct-q4_1", "--yes")
    assert refused.exit_code == 1 and "not a download" in refused.output
