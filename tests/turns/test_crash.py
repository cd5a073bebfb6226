"""SIGKILL the real turn pipeline at seeded random moments: never a partial turn, and restart heals.

A real subprocess (``crash_driver.py``) runs the real :class:`Runtime` on the embedded model under
the ``test-fast`` profile and runs turns in one session. Each run is killed with SIGKILL at a
seeded random moment aimed at one phase (start-up and its summary recovery, routing, answering,
the commit transaction, the background summary), then restarted, until at least 50 turns have
been started. After every kill the database must hold only whole turns on one intact branch, no
summary without its turn, every turn committed before (unchanged), exactly the turns whose commit
finished, and the summaries the previous run left pending once the restart got going.
"""

from __future__ import annotations

import math
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlite_utils
import tomli_w

from macaron_local.hcp import load_profile
from macaron_local.store import (
    branch,
    create_session,
    get_session,
    open_db,
    pending_summaries,
    recover,
    summaries,
)
from macaron_local.store.turns import turn_from_row
from tests.turns.conftest import FAST_PROFILE

DRIVER = Path(__file__).with_name("crash_driver.py")
MIN_STARTED = 30  # ~12 kills: every target phase at least twice (50 took 5.4 min of a 15-min suite)
SEED = 20260419
SILENCE_S = 420.0  # no event line for this long means the driver hangs
# target phase -> (event line that arms the kill, max random delay after it in seconds)
TARGETS = {
    "startup": ("pending", 1.0),
    "route": ("start", 0.25),
    "answer": ("routed", 0.5),
    "commit": ("commit-begin", 0.0),
    "summary": ("summary-begin", 0.8),
}


@dataclass
class Run:
    lines: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # when each line was read

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.times.append(time.perf_counter())

    def startup_s(self) -> float:
        """From the first line (``open``) to ``ready``: start-up, recovery and pending summaries."""
        if "ready" not in self.lines:
            return 0.0
        return self.times[self.lines.index("ready")] - self.times[0]

    def count(self, event: str) -> int:
        return sum(1 for line in self.lines if line.split()[0] == event)

    def landed(self) -> set[str]:
        """Where the process was when it died, from the last events it printed."""
        phase, in_flight, recovering = "startup", 0, False
        for line in self.lines:
            event, *rest = line.split()
            if event == "pending":
                recovering = rest[0] != "0"
            elif event == "ready":
                phase, recovering = "idle", False
            elif event == "start":
                phase = "route" if rest[1] == "auto" else "view"
            elif event in ("routed", "answer"):
                phase = "answer"
            elif event == "commit-begin":
                phase = "commit"
            elif event in ("commit-end", "done", "failed", "waited"):
                phase = "idle"
            elif event == "summary-begin":
                in_flight += 1
            elif event == "summary-saved":
                in_flight -= 1
        where = {phase}
        if in_flight > 0 or recovering:
            where.add("summary")
        return where


def crash_profile() -> str:
    """The fast test profile, shorter still. What is tested is where a kill lands, not what the
    model says: the shortest answers and summaries the profile allows keep 50 real turns and
    their restarts to a few minutes. One llama.cpp thread: on 2 shared cores a second batch
    thread makes small prompt evaluations many times slower whenever another process holds a
    core (spin barriers); 1 is robust."""
    data = tomllib.loads(FAST_PROFILE)
    data["summary"]["max_tokens"] = 16
    data["sampling"]["defaults"]["max_tokens"] = 8
    data["sampling"]["overrides"]["L2"]["max_tokens"] = 8
    data["resources"] = {"threads": 1}
    return tomli_w.dumps(data)


def _reader(stream, out: queue.Queue[str | None]) -> None:  # a text pipe
    for line in stream:
        out.put(line.strip())
    out.put(None)


def _run_and_kill(
    db_path: Path,
    session_id: str,
    seed: int,
    target: str,
    turn_no: int,
    delay: float,
    err: Path,
    max_turns: int | None = None,
) -> tuple[Run, bool]:
    """Start the driver; kill it ``delay`` s after the ``turn_no``-th arming event of ``target``.

    With ``max_turns`` nothing is killed: the run must end cleanly. Returns (run, killed).
    """
    args = [sys.executable, "-u", str(DRIVER), str(db_path), session_id, str(seed)]
    if max_turns is not None:
        args.append(str(max_turns))
    with err.open("w") as err_file:
        proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=err_file, text=True, env={**os.environ}
        )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
    reader.start()
    run, event, seen, killed = Run(), TARGETS[target][0], 0, False
    need = 1 if target == "startup" else turn_no  # start-up happens once per run
    try:
        while (line := lines.get(timeout=SILENCE_S)) is not None:
            run.add(line)
            if max_turns is not None:
                continue
            words = line.split()
            # a pinned turn is not routed: only auto turns arm a kill aimed at routing
            seen += int(words[0] == event and (target != "route" or words[2] == "auto"))
            if seen >= need or run.count("start") > need + 6:
                time.sleep(delay)
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
    except queue.Empty:
        os.kill(proc.pid, signal.SIGUSR1)  # its threads' stacks go to its stderr
        time.sleep(2)
        proc.kill()
        pytest.fail(
            f"the driver printed nothing for {SILENCE_S} s after {run.lines[-8:]}; "
            f"stderr: {err.read_text()[-6000:]}"
        )
    proc.wait(timeout=60)
    reader.join(timeout=60)
    while killed and (line := lines.get(timeout=10)) is not None:
        run.add(line)  # what it printed between our read and its death
    if killed:
        assert proc.returncode == -signal.SIGKILL, err.read_text()[-2000:]
    else:
        assert proc.returncode == 0, f"the driver failed: {err.read_text()[-3000:]}"
    return run, killed


def _turn_rows(db: sqlite_utils.Database) -> dict[str, dict]:
    return {row["id"]: dict(row) for row in db.query("SELECT * FROM turns ORDER BY rowid")}


def _check_turn(
    row: dict, rows: dict[str, dict], labels: list[str], profile_hash: str, fallback: str
) -> None:
    turn = turn_from_row(row)
    assert turn.answer.strip(), f"turn {turn.id} has an empty answer"
    assert turn.label in labels
    assert turn.profile_hash == profile_hash and turn.adapter_revision
    t = turn.timings
    assert {"route_ms", "ttft_ms", "answer_ms", "total_ms"} <= set(t), t
    assert all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in t.values()), t
    assert t["answer_ms"] > 0 and t["total_ms"] >= t["answer_ms"] and t["ttft_ms"] <= t["total_ms"]
    assert turn.tokens["completion"] > 0 and turn.tokens["prompt"] > 0, turn.tokens
    if turn.route_kind == "auto":
        assert abs(sum(turn.route_probs.values()) - 1) < 1e-3
        assert max(turn.route_probs, key=turn.route_probs.get) == turn.label
    elif turn.route_kind == "fallback":
        assert turn.label == fallback and "route_error" in turn.meta
    elif turn.route_kind == "manual":
        assert turn.route_probs == {}
    else:
        assert turn.route_kind == "sticky" and turn.tool_result_of in rows
        assert turn.label == rows[turn.tool_result_of]["label"]


def _check_db(
    db: sqlite_utils.Database, session_id: str, labels: list[str], profile_hash: str, fallback: str
) -> dict[str, dict]:
    """Every invariant after a kill; returns the committed turn rows by id."""
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    orphans = db.execute(
        "SELECT count(*) FROM summaries WHERE turn_id NOT IN (SELECT id FROM turns)"
    ).fetchone()
    assert orphans == (0,), "a summary without its turn"
    report = recover(db)
    assert not report.repaired, f"recovery had to repair something: {report}"
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    rows = _turn_rows(db)
    for row in rows.values():
        _check_turn(row, rows, labels, profile_hash, fallback)
    for turn_id, summary in summaries(db, list(rows)).items():
        assert summary.text.strip() and summary.label == rows[turn_id]["label"]
    head = get_session(db, session_id).head_turn_id
    path = branch(db, session_id)
    if not rows:
        assert head is None and path == []
    else:  # the driver only appends: all turns form one chain ending at the head
        assert head in rows and path[-1].id == head and path[0].parent_id is None
        assert all(b.parent_id == a.id for a, b in zip(path, path[1:], strict=False))
        assert {t.id for t in path} == set(rows)
    return rows


@pytest.mark.slow
@pytest.mark.timeout(3600)  # ~3 min on 2 idle cores; 20+ min at load 20-30
def test_sigkill_during_real_turns_never_leaves_a_partial_turn(
    tmp_path: Path,
    _isolated_home: Path,
) -> None:
    folder = _isolated_home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test-fast.toml").write_text(crash_profile())
    profile = load_profile("test-fast")
    args = (list(profile.labels), profile.content_hash, profile.router.fallback)
    db_path = tmp_path / "crash.db"
    setup = open_db(db_path)
    session_id = create_session(setup, "crash test", profile_id=profile.id).id
    setup.close()
    rng = random.Random(SEED)
    order = list(TARGETS)
    committed: dict[str, dict] = {}
    pending: set[str] = set()
    started, landed, healed, kills, t0 = 0, Counter(), 0, 0, time.perf_counter()
    startup_s = 0.0
    while started < MIN_STARTED:
        target = order[kills % len(order)]
        run, killed = _run_and_kill(
            db_path,
            session_id,
            seed=kills,
            target=target,
            turn_no=rng.randint(1, 5),
            delay=rng.uniform(0, TARGETS[target][1]),
            err=tmp_path / f"run{kills}.err",
        )
        assert killed, f"run {kills} ended before its kill: {run.lines[-5:]}"
        kills += 1
        started += run.count("start")
        startup_s += run.startup_s()
        landed.update(run.landed())
        db = open_db(db_path)
        rows = _check_db(db, session_id, *args)
        # never decreases, never changes, grows only by the turns whose commit finished
        assert all(rows.get(i) == row for i, row in committed.items()), "a committed turn changed"
        grown = len(rows) - len(committed)
        done = run.count("commit-end")
        in_commit = "commit" in run.landed()  # killed inside commit_turn: all of it or nothing
        assert grown == done or (in_commit and grown == done + 1), (grown, done, run.lines[-3:])
        if "ready" in run.lines:  # the restart finished what the killed run left pending
            missing = pending - set(summaries(db, list(pending)))
            assert not missing, f"pending summaries not finished on restart: {missing}"
            healed += len(pending)
        committed, pending = rows, set(pending_summaries(db))
        db.close()
    # a clean final run: finishes the leftovers, two turns, closes; nothing left pending
    run, _ = _run_and_kill(
        db_path,
        session_id,
        seed=kills,
        target="route",
        turn_no=0,
        delay=0,
        err=tmp_path / "final.err",
        max_turns=2,
    )
    assert run.lines[-1] == "closed" and run.count("done") + run.count("failed") == 2
    db = open_db(db_path)
    rows = _check_db(db, session_id, *args)
    assert len(rows) == len(committed) + run.count("done")
    assert pending_summaries(db) == []
    assert set(summaries(db, list(rows))) == set(rows)
    db.close()
    print(
        f"\n{kills} kills, {started} turns started, {len(committed)} committed before the "
        f"final run, {healed} pending summaries finished on restart, "
        f"{time.perf_counter() - t0:.0f} s ({startup_s:.0f} s of it in start-ups); "
        f"kills landed in: {dict(sorted(landed.items()))}"
    )
    for phase in ("route", "answer", "summary"):
        assert landed[phase] > 0, f"no kill landed in the {phase} phase: {dict(landed)}"
