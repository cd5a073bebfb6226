"""``macaron doctor`` on this machine, with faults made on purpose."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from macaron_local import paths
from macaron_local.doctor import REBUILD_CPU, doctor
from macaron_local.engine import _lcpp
from tests.model_manager.conftest import blob, write_manifest

PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "doc-test"
version = "1.0.0"
description = "tall-local on base weights, for the doctor tests"

[adapters.L0]
revision = "none"
[adapters.L1]
revision = "none"
[adapters.L2]
revision = "none"
[adapters.L3]
revision = "none"
"""


def write_profile(extra: str = "", base: str | None = None) -> str:
    text = PROFILE + extra
    if base:
        text += f'\n[base]\nmodel = "{base}"\n'
    folder = paths.ensure(paths.config_dir() / "profiles")
    (folder / "doc-test.toml").write_text(text)
    return "doc-test"


def run(*args: str, **env: str):
    env.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return CliRunner().invoke(doctor, list(args), env=env, catch_exceptions=False)


def checks(done) -> dict[str, dict]:
    rows = [json.loads(line) for line in done.output.splitlines() if line.startswith("{")]
    return {f"{r['section']}/{r['name']}": r for r in rows}


def test_a_healthy_machine_passes_and_explains_itself() -> None:
    (paths.ensure(paths.data_dir()) / "notes.bin").write_bytes(b"x" * 4096)
    done = run("--profile", write_profile())
    assert done.exit_code == 0, done.output
    for section in ("cpu", "llama.cpp", "profile", "models", "secrets", "folders", "remote"):
        assert f"\n{section}\n" in f"\n{done.output}"
    assert "llama-cpp-python: 0.3.36" in done.output
    assert "smollm2-135m-instruct-q4_1 base: verified" in done.output
    assert "4.0 KiB" in done.output  # the data folder's size
    rows = checks(run("--profile", "doc-test", "--json"))
    assert rows["profile/doc-test"]["level"] == "ok"
    assert rows["remote/endpoint"]["level"] == "info"  # not configured: nothing is contacted


def test_the_amx_build_is_flagged_with_the_rebuild_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        _lcpp, "system_info", lambda: "CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
    )
    done = run("--profile", write_profile())
    assert "AMX kernels" in done.output and "SIGSEGV" in done.output
    assert REBUILD_CPU in done.output
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall' in (
        done.output
    )


def test_an_unpublished_base_fails_with_the_way_out() -> None:
    done = run("--profile", "tall-gpu")
    assert done.exit_code == 1
    assert "not published yet" in done.output
    assert "macaron --profile tall-local" in done.output


def test_a_missing_download_says_which_pull_fixes_it() -> None:
    write_manifest("tiny-missing", blob(100))
    done = run("--profile", write_profile(base="tiny-missing"))
    assert done.exit_code == 1
    assert "tiny-missing base: missing" in done.output
    assert "macaron models pull tiny-missing" in done.output


def test_the_keyring_without_a_backend_is_a_warning_with_a_fix() -> None:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()  # keyring keeps the first backend a process loads:
    keyring.set_keyring(fail.Keyring())  # the environment variable alone is not enough
    try:
        rows = checks(run("--profile", write_profile(), "--json"))
    finally:
        keyring.set_keyring(previous)
    assert rows["secrets/keyring"]["level"] == "warn"
    assert "keyrings.alt" in rows["secrets/keyring"]["fix"]


@pytest.fixture
def remote() -> Iterator[str]:
    class Models(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"object": "list", "data": []}' if self.path == "/v1/models" else b"{}"
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_remote_endpoint_is_probed_only_when_configured(remote: str) -> None:
    extra = f'\n[remote]\nenabled = true\nendpoint = "{remote}"\n'
    rows = checks(run("--profile", write_profile(extra), "--json"))
    assert rows[f"remote/{remote}"]["level"] == "ok"
    assert "HTTP 200" in rows[f"remote/{remote}"]["detail"]


def test_an_unreachable_remote_fails_with_what_to_check() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    extra = f'\n[remote]\nenabled = true\nendpoint = "{url}"\n'
    done = run("--profile", write_profile(extra))
    assert done.exit_code == 1
    assert "unreachable" in done.output and f"curl {url}/models" in done.output


def test_a_gpu_build_lists_the_gpus_llama_cpp_sees() -> None:
    """The GPU offload line names each GPU with its free memory (ggml's device list, on this
    CPU build: none, which a GPU build that finds no driver also says)."""
    from macaron_local.doctor import llama_checks

    on = {c.name: c for c in llama_checks(gpu_offload=lambda: True)}["GPU offload"]
    assert on.level == "ok"
    assert on.detail == "available, but llama.cpp sees no GPU now"
    assert all(not d.gpu for d in _lcpp.devices()) and _lcpp.devices()[0].total > 0
