"""Failover latency: from a remote failure to the first local token, for each fault.

Run ``nice -n 19 python bench/failover.py [--runs N] [--json OUT]`` from the repository root.
It starts ``python -m llama_cpp.server`` on 127.0.0.1 (the embedded model, as a stand-in for a
Venti server), the tests' fault proxy in front of it, and the real runtime (hybrid profile with
short answers, store in a temporary folder). For each fault (drop mid-stream, stall, HTTP 500,
429 with a Retry-After above the cap, connection refused) it runs heavy (L2) turns and measures:

- detect: turn start -> the failover notice (the client saw the failure; a stall is only seen
  when the read timeout, 3 s here, runs out);
- failover: the notice -> the first local token (the number the issue asks for);
- turn: the whole turn.

Baselines: the same turn answered remotely with no fault, and locally with no remote at all
(turn start -> first token). A benchmark, not a test: it asserts nothing and is never collected.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from macaron_local.turns.turn import TurnEvents, TurnRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAULTS = {  # name -> Fault arguments
    "drop mid-stream": {"kind": "drop", "after_events": 3},
    "stall (read timeout 3 s)": {"kind": "stall", "after_events": 3},
    "HTTP 500": {"kind": "status", "status": 500},
    "HTTP 429, Retry-After 60": {"kind": "status", "status": 429, "retry_after": "60"},
    "connection refused": {"kind": "refuse"},
}
REQUEST = "Write a shell command that counts the lines of every .py file in a folder."


def _turn(rt, text: str, **kw) -> dict[str, float | str | None]:
    expect_failover = kw.pop("expect_failover", True)
    t0 = time.perf_counter()
    marks: dict[str, float] = {}

    def on_notice(notice) -> None:
        if notice.kind == "failover":
            marks.setdefault("notice", time.perf_counter())

    def on_text(_piece: str) -> None:
        if "notice" in marks or not expect_failover:
            marks.setdefault("first", time.perf_counter())

    session = rt.new_session("bench").id
    r = rt.run_turn(
        TurnRequest(session, text, **kw),  # type: ignore[arg-type]
        TurnEvents(on_text=on_text, on_notice=on_notice),
    )
    end = time.perf_counter()
    notice, first = marks.get("notice"), marks.get("first")
    return {
        "backend": r.backend,
        "reason": r.meta.get("failover_reason"),
        "detect_ms": (notice - t0) * 1000 if notice else None,
        "failover_ms": (first - notice) * 1000 if notice and first else None,
        "first_ms": (first - t0) * 1000 if first else None,
        "turn_ms": (end - t0) * 1000,
    }


def _fresh_hook(rt, read_timeout_s: float):
    from macaron_local.remote.hybrid import RemoteHook

    rt.remote.close()
    rem = rt.profile.remote.model_copy(update={"read_timeout_s": read_timeout_s})
    rt.remote = RemoteHook(rt.profile.model_copy(update={"remote": rem}), retry_after_cap_s=2.0)


def _median(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r[key] is not None]
    return statistics.median(values) if values else None


def _fmt(v: float | None) -> str:
    return f"{v:8.0f}" if v is not None else "       -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from macaron_local.manifests import embedded_model_file
    from macaron_local.turns.pipeline import Runtime
    from tests.remote.conftest import TEST_PROFILE
    from tests.remote.faultproxy import Fault, FaultProxy
    from tests.remote.venti import start_venti

    tmp = Path(tempfile.mkdtemp(prefix="failover-bench-"))
    os.environ["MACARON_HOME"] = str(tmp)
    (tmp / "config" / "profiles").mkdir(parents=True)
    (tmp / "config" / "profiles" / "test-hybrid.toml").write_text(TEST_PROFILE)
    venti = start_venti(embedded_model_file(), "bench-key-0123456789", tmp / "server.log")
    proxy = FaultProxy(venti.port)
    proxy.start()
    os.environ["MACARON_REMOTE_URL"] = proxy.url
    os.environ["MACARON_REMOTE_API_KEY"] = venti.api_key
    results: dict[str, list[dict]] = {}
    try:
        with Runtime.open("test-hybrid", db_path=tmp / "data" / "macaron.db") as rt:
            _turn(rt, REQUEST, label="L2", remote=False)  # warm the local slot and the server
            rows = []
            for _ in range(args.runs):
                _fresh_hook(rt, 60.0)
                rows.append(_turn(rt, REQUEST, label="L2", expect_failover=False))
            results["baseline: remote, no fault"] = rows
            for name, fault in FAULTS.items():
                rows = []
                for _ in range(args.runs):
                    _fresh_hook(rt, 3.0)
                    proxy.set(Fault(**fault))
                    rows.append(_turn(rt, REQUEST, label="L2"))
                    proxy.clear()
                results[name] = rows
            os.environ.pop("MACARON_REMOTE_URL")
            rows = []
            for _ in range(args.runs):
                _fresh_hook(rt, 60.0)
                rows.append(_turn(rt, REQUEST, label="L2", expect_failover=False))
            results["baseline: local only (no endpoint)"] = rows
            rt.finish_pending()
    finally:
        proxy.stop()
        venti.stop()

    print(f"\nfailover latency, median of {args.runs} runs (ms)\n")
    header = f"{'fault':<36}{'reason':<16}{'detect':>8}{'failover':>10}{'1st tok':>9}{'turn':>8}"
    print(header)
    print("-" * len(header))
    for name, rows in results.items():
        reasons = {str(r["reason"] or r["backend"]) for r in rows}
        print(
            f"{name:<36}{'/'.join(sorted(reasons)):<16}{_fmt(_median(rows, 'detect_ms'))}"
            f"  {_fmt(_median(rows, 'failover_ms'))}{_fmt(_median(rows, 'first_ms'))}"
            f"{_fmt(_median(rows, 'turn_ms'))}"
        )
    print("\ndetect: turn start -> failure seen; failover: failure -> first local token;")
    print("1st tok: turn start -> first token the user keeps (local after a failover).")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
