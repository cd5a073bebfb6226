"""Load run for ``macaron serve``: concurrent streaming clients on loopback, and a baseline.

Run ``nice -n 19 python bench/serve.py [--clients 16] [--duration 60] [--answer-tokens 64]
[--json OUT]``. It starts ``python -m macaron_local.serve`` on 127.0.0.1 (embedded model, a
bench profile = tall-local with the answer budget given, store in a temporary folder) and drives
it with N streaming clients for D seconds, each in its own conversation (``X-Conversation-Id``),
one request after another; a 429 waits its Retry-After and retries. Then it stops the server
(SIGINT: running turns end, summaries are written) and checks the store: every answered request
is exactly one turn of its conversation (none lost, none duplicated), the server did not crash,
and the admission queue stayed within its bound. It reports p50/p95 time to first content token
(from the request's start, the route hop and any queueing included) and the answer throughput
(content chunks/s over the run), the median route time of the stored turns (``route_ms`` in
their timings: the router's own request, queueing behind answers included) and the server
process's peak resident memory, sampled every half second.

The baseline is ``python -m llama_cpp.server`` on the same GGUF file, same context and answer
budget, driven the same way (stateless requests: it has no conversations, no route, no summary).

A benchmark, not a test: asserts nothing, never collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = [
    "What is a good way to learn a new language?",
    "Write a Python function that reverses a string.",
    "Explain what a hash table is.",
    "Give me three ideas for a weekend trip.",
    "Write a SQL query that counts orders per customer.",
    "How do I make a good cup of tea?",
]
BENCH_PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "bench-serve"
version = "1.0.0"
description = "tall-local with a fixed answer budget, for bench/serve.py"

[sampling.defaults]
max_tokens = {n}

[sampling.overrides.L1]
max_tokens = {n}

[sampling.overrides.L2]
max_tokens = {n}

[sampling.overrides.L3]
max_tokens = {n}
"""


@dataclass
class Client:
    conversation: str | None
    ttft: list[float] = field(default_factory=list)
    chunks: int = 0
    ok: int = 0
    rejected: int = 0
    errors: list[str] = field(default_factory=list)
    turns: list[str] = field(default_factory=list)  # turn ids the server reported


def stream_once(http: httpx.Client, url: str, body: dict, headers: dict, c: Client) -> None:
    started = time.perf_counter()
    first = None
    with http.stream("POST", url, json=body, headers=headers) as r:
        if r.status_code == 429:
            c.rejected += 1
            time.sleep(float(r.headers.get("retry-after", "1")))
            return
        if r.status_code != 200:
            c.errors.append(f"HTTP {r.status_code}: {r.read()[:200]!r}")
            return
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[6:])
            if "error" in data:
                c.errors.append(str(data["error"])[:200])
                return
            for choice in data.get("choices", []):
                if choice.get("delta", {}).get("content"):
                    first = first or time.perf_counter()
                    c.chunks += 1
            turn = (data.get("macaron") or {}).get("turn")
            if turn:
                c.turns.append(turn)
    if first is not None:
        c.ttft.append(first - started)
    c.ok += 1


def drive(
    base: str, model: str, n: int, duration: float, answer_tokens: int, conversations: bool
) -> tuple[list[Client], float]:
    clients = [Client(f"bench-{i}" if conversations else None) for i in range(n)]
    start_gate = threading.Barrier(n + 1)
    deadline = [0.0]

    def run(i: int, c: Client) -> None:
        headers = {"X-Conversation-Id": c.conversation} if c.conversation else {}
        with httpx.Client(timeout=httpx.Timeout(600.0)) as http:
            start_gate.wait()
            k = i
            while time.perf_counter() < deadline[0]:
                body = {
                    "model": model,
                    "stream": True,
                    "max_tokens": answer_tokens,
                    "temperature": 0.0,
                    "messages": [{"role": "user", "content": PROMPTS[k % len(PROMPTS)]}],
                }
                try:
                    stream_once(http, f"{base}/v1/chat/completions", body, headers, c)
                except httpx.HTTPError as exc:
                    c.errors.append(f"{type(exc).__name__}: {exc}")
                k += 1

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    deadline[0] = t0 + duration
    start_gate.wait()
    for t in threads:
        t.join()
    return clients, time.perf_counter() - t0


def summarize(name: str, clients: list[Client], wall: float) -> dict:
    ttft = sorted(x for c in clients for x in c.ttft)
    q = statistics.quantiles(ttft, n=20) if len(ttft) >= 2 else [float("nan")] * 19
    return {
        "server": name,
        "requests_ok": sum(c.ok for c in clients),
        "rejected_429": sum(c.rejected for c in clients),
        "errors": sum(len(c.errors) for c in clients),
        "ttft_p50_s": round(statistics.median(ttft), 3) if ttft else None,
        "ttft_p95_s": round(q[18], 3) if ttft else None,
        "content_chunks_per_s": round(sum(c.chunks for c in clients) / wall, 2),
        "wall_s": round(wall, 1),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not get ready")


def bench_macaron(args: argparse.Namespace, home: Path) -> dict:
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    text = BENCH_PROFILE.replace("{n}", str(args.answer_tokens))
    if args.extends != "tall-local":  # a profile file to build on (e.g. a copy of tall-local)
        src = Path(args.extends)
        (folder / src.name).write_text(src.read_text())
        text = text.replace('extends = "tall-local"', f'extends = "{src.stem}"')
    (folder / "bench-serve.toml").write_text(text)
    env = {**os.environ, "MACARON_HOME": str(home)}
    env.pop("MACARON_SERVE_TOKEN", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "macaron_local.serve",
            "--port",
            "0",
            "--profile",
            "bench-serve",
            "--concurrency",
            str(args.concurrency),
            "--queue",
            str(args.queue),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=(home / "serve.log").open("w"),
        text=True,
        cwd=ROOT,
    )
    base = re.search(r"http://127\.0\.0\.1:\d+", proc.stdout.readline()).group(0)  # type: ignore[union-attr]
    wait_ready(f"{base}/health", proc)
    peak = [0.0]
    sampler = threading.Thread(target=sample_rss, args=(proc, peak), daemon=True)
    sampler.start()
    clients, wall = drive(
        base, "bench-serve", args.clients, args.duration, args.answer_tokens, conversations=True
    )
    health = httpx.get(f"{base}/health", timeout=30).json()
    crashed = proc.poll() is not None
    proc.send_signal(signal.SIGINT)
    code = proc.wait(900)
    row = summarize("macaron serve", clients, wall)
    row.update(
        store_check(home, clients),
        crashed=crashed,
        exit_code=code,
        peak_waiting=health["admission"]["peak_waiting"],
        peak_active=health["admission"]["peak_active"],
        queue_bound=args.queue,
        concurrency=args.concurrency,
        peak_rss_mib=round(peak[0]),
    )
    row["sample_errors"] = [e for c in clients for e in c.errors][:3]
    return row


def sample_rss(proc: subprocess.Popen, peak: list[float]) -> None:
    """Keep ``peak[0]`` at the largest VmRSS (MiB) of ``proc`` until it exits."""
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmRSS:"):
                    peak[0] = max(peak[0], int(line.split()[1]) / 1024)
        except OSError:
            return
        time.sleep(0.5)


def store_check(home: Path, clients: list[Client]) -> dict:
    sys.path.insert(0, str(ROOT))
    from macaron_local.serve.conversations import Conversations
    from macaron_local.store import branch, open_db, pending_summaries, summaries

    mapping = Conversations(home / "data" / "serve" / "conversations.db").mapping()
    db = open_db(home / "data" / "macaron.db")
    lost = dup = stored = 0
    route_ms = []
    for c in clients:
        session = mapping.get(c.conversation or "")
        turns = branch(db, session) if session else []
        route_ms += [t.timings["route_ms"] for t in turns if "route_ms" in t.timings]
        ids = [t.id for t in turns]
        stored += len(ids)
        dup += len(ids) - len(set(ids)) + max(0, len(ids) - c.ok)
        lost += max(0, c.ok - len(ids)) + len(set(c.turns) - set(ids))
    all_ids = [t for c in clients for t in c.turns]
    n_summaries = len(summaries(db, all_ids))
    return {
        "route_p50_ms": round(statistics.median(route_ms)) if route_ms else None,
        "turns_stored": stored,
        "turns_lost": lost,
        "turns_duplicated": dup,
        "summaries_stored": n_summaries,
        "summaries_pending": len(pending_summaries(db)),
    }


def bench_llama_server(args: argparse.Namespace, model: Path, home: Path) -> dict:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--interrupt_requests",  # its default cuts a running stream when a new request comes
        "False",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=(home / "llama_server.log").open("w")
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(f"{base}/v1/models", proc)
        clients, wall = drive(
            base, "smollm2", args.clients, args.duration, args.answer_tokens, conversations=False
        )
        crashed = proc.poll() is not None
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    row = summarize("llama_cpp.server", clients, wall)
    row.update(crashed=crashed)
    row["sample_errors"] = [e for c in clients for e in c.errors][:3]
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--answer-tokens", type=int, default=64)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--queue", type=int, default=32)
    p.add_argument("--skip-baseline", action="store_true")
    p.add_argument("--only-baseline", action="store_true")
    p.add_argument("--extends", default="tall-local", help="profile to build on (name or file)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from macaron_local.manifests import embedded_model_file

    model = embedded_model_file()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        if not args.only_baseline:
            rows.append(bench_macaron(args, Path(tmp) / "macaron"))
        if not args.skip_baseline:
            rows.append(bench_llama_server(args, model, Path(tmp)))
    print(
        f"\n{args.clients} streaming clients, {args.duration:.0f} s, answers <= "
        f"{args.answer_tokens} tokens, model {model.name}, {os.cpu_count()} cores\n"
    )
    keys = [
        "server",
        "requests_ok",
        "rejected_429",
        "errors",
        "ttft_p50_s",
        "ttft_p95_s",
        "content_chunks_per_s",
    ]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r.get(k)) for k in keys) + " |")
    m = rows[0]
    if "turns_stored" in m:
        print(
            f"\nmacaron serve: crashed={m['crashed']} exit={m['exit_code']} turns stored="
            f"{m['turns_stored']} lost={m['turns_lost']} duplicated={m['turns_duplicated']} "
            f"summaries={m['summaries_stored']} pending={m['summaries_pending']} peak waiting="
            f"{m['peak_waiting']}/{m['queue_bound']} peak active={m['peak_active']}/"
            f"{m['concurrency']} route p50={m['route_p50_ms']} ms peak RSS="
            f"{m['peak_rss_mib']} MiB"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
