"""A planted API key is used for remote turns and never written anywhere under MACARON_HOME.

The key lives only in the (file-based, test) OS keyring, whose file is outside MACARON_HOME.
After remote turns, a failover, summaries, experience records, session exports and DEBUG logs
written to a file under MACARON_HOME, every file there is grepped for the key's bytes.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from macaron_local import secrets
from macaron_local.experience.log import export as export_experience
from macaron_local.experience.log import rows as experience_rows
from macaron_local.experience.settings import set_user_choice
from macaron_local.store import export_session
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnEvents, TurnRequest
from tests.remote.conftest import FileKeyring
from tests.remote.faultproxy import Fault, FaultProxy
from tests.remote.venti import Venti


def test_a_planted_key_is_never_written(
    runtime: Runtime,
    runtime_home: Path,
    proxy: FaultProxy,
    venti: Venti,
    test_keyring: FileKeyring,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = venti.api_key
    monkeypatch.setenv("MACARON_HOME", str(runtime_home))
    monkeypatch.setenv("MACARON_REMOTE_URL", proxy.url)
    secrets.save_api_key(SecretStr(key))
    assert not test_keyring.path.is_relative_to(runtime_home)
    set_user_choice(True)  # the runtime keeps every committed turn in the experience log
    logs = runtime_home / "logs"
    logs.mkdir(exist_ok=True)
    handler = logging.FileHandler(logs / "macaron.log")
    handler.setLevel(logging.DEBUG)
    logging.getLogger().addHandler(handler)
    caplog.set_level(logging.DEBUG)
    try:
        s = runtime.new_session("leak check")
        ok = runtime.run_turn(TurnRequest(s.id, "Write hello world in C.", label="L2"))
        proxy.set(Fault("status", 500))
        failed = runtime.run_turn(TurnRequest(s.id, "And in Go.", label="L2"))
        runtime.finish_pending()
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    assert ok.backend == "remote" and failed.meta["failover_reason"] == "server_error"
    assert proxy.requests[0].headers["authorization"] == f"Bearer {key}"  # the key was used

    db = runtime.db()
    exports = runtime_home / "exports"
    exports.mkdir(exist_ok=True)
    (exports / "session.json").write_text(export_session(db, s.id, "json"))
    (exports / "session.md").write_text(export_session(db, s.id, "markdown"))
    kept = {r.turn_id for r in experience_rows(db)}
    assert {ok.id, failed.id} <= kept
    (exports / "experience.json").write_text(json.dumps(export_experience(db), default=str))

    files = [p for p in runtime_home.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"macaron.db", "macaron.log", "session.json", "experience.json"} <= names
    assert (logs / "macaron.log").stat().st_size > 0
    leaked = [str(p) for p in files if key.encode() in p.read_bytes()]
    assert leaked == []
    assert key not in caplog.text


def test_a_key_the_remote_echoes_is_scrubbed_everywhere(
    runtime: Runtime,
    runtime_home: Path,
    proxy: FaultProxy,
    venti: Venti,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 401 body "Incorrect API key provided: Bearer <key>" (as many gateways answer) reaches
    the notice, the turn record, the exports, the log, the CLI's output and ``--json`` only
    with the key replaced."""
    key = venti.api_key
    monkeypatch.setenv("MACARON_HOME", str(runtime_home))
    monkeypatch.setenv("MACARON_REMOTE_URL", proxy.url)
    monkeypatch.setenv("MACARON_REMOTE_API_KEY", key)
    caplog.set_level(logging.DEBUG)
    proxy.set(Fault("echo_auth"))
    notices: list[object] = []
    s = runtime.new_session("echo")
    turn = runtime.run_turn(
        TurnRequest(s.id, "Write hello world in C.", label="L2"),
        TurnEvents(on_notice=notices.append),
    )
    runtime.finish_pending()
    assert proxy.requests[-1].headers["authorization"] == f"Bearer {key}"  # the echo had it
    detail = turn.meta["failover_detail"]
    assert turn.meta["failover_reason"] == "unauthorized"
    assert "Incorrect API key provided: Bearer [redacted]" in detail and key not in detail
    assert notices and all(key not in str(n) for n in notices)
    db = runtime.db()
    for fmt in ("json", "markdown"):
        assert key not in export_session(db, s.id, fmt)
    cli = subprocess.run(
        [str(Path(sys.executable).with_name("macaron")), "ask", "--profile", "test-hybrid"]
        + ["--label", "L2", "--json", "Write hello world in Go."],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert cli.returncode == 0, cli.stderr
    record = json.loads(cli.stdout)
    assert record["failover_reason"] == "unauthorized" and "[redacted]" in cli.stderr
    assert key not in cli.stdout and key not in cli.stderr
    stored = [p for p in runtime_home.rglob("*") if p.is_file()]
    assert [str(p) for p in stored if key.encode() in p.read_bytes()] == []
    assert key not in caplog.text
