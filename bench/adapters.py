"""Evaluate the default specialists against the base model on sets kept out of training.

Run: python bench/adapters.py [--limit N] [--json OUT] [--l0-only] [--l0-file GGUF] [--no-base]

Measured side by side in one run, on the embedded model, with each label's profile prompt:
  router  (bench/eval/route_eval.jsonl)   accuracy per label, L0 adapter vs base weights
  L2      (bench/eval/code_tasks.jsonl)   share of tasks whose tests pass when executed
  L1      (bench/eval/agent_prompts.jsonl) share of answers with a ```repl block that parses
  L3      (bench/eval/genui_prompts.jsonl) share that render as expected (UI doc valid / plain text)
  summary (bench/eval/summary_turns.jsonl) share of summaries within the 192-token cap
  chat    (the L0 lines of route_eval.jsonl) share of L0 answers that are more than a bare label
``--l0-only`` measures only L0's figures (router, L0 summaries, chat); ``--l0-file`` serves L0
from another file (e.g. the revision shipped before a retrain); ``--no-base`` skips the base.
A benchmark, not a test: it prints figures and never asserts.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT / "bench" / "eval"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def rows(name: str, limit: int | None) -> list[dict]:
    data = [json.loads(x) for x in (EVAL / name).read_text().splitlines() if x.strip()]
    if limit and len(data) > limit:  # an even spread, not the first N (the sets are grouped)
        step = len(data) / limit
        data = [data[int(i * step)] for i in range(limit)]
    return data


def answer(engine, profile, tools, label, text, adapter, max_tokens=256):
    from macaron_local.turns.answer import sampling

    msgs = [
        {"role": "system", "content": profile.system_prompt(label, tools)},
        {"role": "user", "content": text},
    ]
    s = sampling(profile.sampling_for(label))
    return engine.complete(
        engine.render_chat(msgs),
        adapter=adapter,
        slot=f"eval:{label}",
        max_tokens=max_tokens,
        sampling=s,
    ).text


def eval_router(engine, profile, tools, data, adapter):
    from macaron_local.turns.route import route

    confusion, ms = Counter(), []
    for r in data:
        got = route(engine, profile, r["text"], adapter=adapter, tools=tools)
        confusion[(r["label"], got.label)] += 1
        ms.append(got.ms)
    ok = sum(n for (want, got), n in confusion.items() if want == got)
    return ok / len(data), confusion, sorted(ms)[len(ms) // 2]


def eval_code(engine, profile, tools, data, adapter, checker):
    passed = 0
    for t in data:
        reply = answer(engine, profile, tools, "L2", t["prompt"], adapter)
        code = checker.first_python_block(reply)
        passed += bool(code) and checker.run_tests(code, t["tests"])[0]
    return passed / len(data)


REPL = re.compile(r"```repl[ \t]*\r?\n(.*?)```", re.S)


def eval_agent(engine, profile, tools, data, adapter):
    ok = 0
    for r in data:
        m = REPL.search(answer(engine, profile, tools, "L1", r["text"], adapter))
        if m:
            try:
                ast.parse(m.group(1))
                ok += 1
            except SyntaxError:
                pass
    return ok / len(data)


def eval_genui(engine, profile, tools, data, adapter, ui_doc):
    ok = parses = 0
    for r in data:
        text = answer(engine, profile, tools, "L3", r["text"], adapter, max_tokens=512)
        has_block = "```ui" in text
        try:
            doc = ui_doc.parse_answer_doc(text)
            valid = doc is not None
            if valid:
                ui_doc.check_doc(doc, r["id"])
        except Exception:  # any failure means it does not render
            valid = False
        parses += valid or not has_block
        ok += valid if r["expect"] == "ui" else not has_block
    return parses / len(data), ok / len(data)


BARE_LABEL = re.compile(r"\s*L\d\W*\s*")


def eval_chat(engine, profile, tools, data, adapter):
    """L0's answers to chat requests: the share that are more than a bare label (the defect of
    a router adapter that forgot how to chat), and their mean length in words."""
    texts = [answer(engine, profile, tools, "L0", r["text"], adapter, max_tokens=96) for r in data]
    ok = sum(bool(t.strip()) and not BARE_LABEL.fullmatch(t) for t in texts)
    return ok / len(texts), sum(len(t.split()) for t in texts) / len(texts)


def eval_summary(engine, profile, tools, data, bindings):
    from macaron_local.turns.summary import start_summary

    within = 0
    for r in data:
        view = [
            {"role": "system", "content": profile.system_prompt(r["label"], tools)},
            {"role": "user", "content": r["request"]},
        ]
        done = start_summary(
            engine,
            profile,
            adapter=bindings(r["label"]),
            slot="eval:summary",
            view=view,
            answer=r["answer"],
            priority=0,
        ).result()
        within += done.finish_reason == "eog" and done.n_generated <= profile.summary.max_tokens
    return within / len(data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="items per set (spread evenly)")
    ap.add_argument("--route-limit", type=int, default=None, help="router items (default: all)")
    ap.add_argument("--profile", default="tall-local")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--l0-only", action="store_true", help="only L0: router, summaries, chat")
    ap.add_argument("--l0-file", type=Path, default=None, help="serve L0 from this GGUF")
    ap.add_argument("--no-base", action="store_true", help="skip the base-weights pass")
    args = ap.parse_args()

    from macaron_local.engine import Engine, EngineConfig
    from macaron_local.hcp import load_profile
    from macaron_local.manifests import get_manifest, verified_path
    from macaron_local.turns.tools import tool_descriptions

    profile = load_profile(args.profile)
    manifest = get_manifest(profile.base.model)
    tools = tool_descriptions()
    checker = _load(EVAL / "check_code_tasks.py", "check_code_tasks")
    ui_doc = _load(ROOT / "models" / "data" / "ui_doc.py", "ui_doc")
    engine = Engine(verified_path(profile.base.model), EngineConfig(n_ctx=4096))
    for a in manifest.adapters:
        path = args.l0_file if a.label == "L0" and args.l0_file else manifest.adapter_path(a)
        engine.load_adapter(a.label, path, base_sha256=manifest.sha256)
    have = {a.label for a in manifest.adapters}
    out: dict[str, dict] = {}
    started = time.perf_counter()
    passes = [("adapters", lambda lab: lab if lab in have else None)]
    if not args.no_base:
        passes.append(("base", lambda lab: None))
    for who, pick in passes:
        res = out[who] = {}
        route_rows = rows("route_eval.jsonl", args.route_limit)
        acc, conf, ms = eval_router(engine, profile, tools, route_rows, pick("L0"))
        res["router_accuracy"], res["route_median_ms"] = acc, ms
        res["confusion"] = {f"{w}->{g}": n for (w, g), n in sorted(conf.items())}
        chat_rows = [r for r in route_rows if r["label"] == "L0"][: args.limit or None]
        res["chat_not_bare_label"], res["chat_mean_words"] = eval_chat(
            engine, profile, tools, chat_rows, pick("L0")
        )
        if args.l0_only:
            l0_summaries = [r for r in rows("summary_turns.jsonl", None) if r["label"] == "L0"]
            res["summary_within_cap"] = eval_summary(engine, profile, tools, l0_summaries, pick)
            print(f"[{who}] done at {time.perf_counter() - started:.0f}s", flush=True)
            continue
        res["code_pass"] = eval_code(
            engine, profile, tools, rows("code_tasks.jsonl", args.limit), pick("L2"), checker
        )
        res["agent_repl_parses"] = eval_agent(
            engine, profile, tools, rows("agent_prompts.jsonl", args.limit), pick("L1")
        )
        res["genui_parses"], res["genui_right_kind"] = eval_genui(
            engine, profile, tools, rows("genui_prompts.jsonl", args.limit), pick("L3"), ui_doc
        )
        res["summary_within_cap"] = eval_summary(
            engine, profile, tools, rows("summary_turns.jsonl", args.limit), pick
        )
        print(f"[{who}] done at {time.perf_counter() - started:.0f}s", flush=True)
    engine.close()
    report(out, have)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


def report(out: dict, have: set[str]) -> None:
    a, b = out["adapters"], out.get("base", {})
    print(f"\nadapters present: {', '.join(sorted(have)) or 'none'}\n")
    print(f"{'figure':34} {'adapters':>9} {'base':>9} {'ratio':>8}")
    for key in (
        "router_accuracy",
        "code_pass",
        "agent_repl_parses",
        "genui_parses",
        "genui_right_kind",
        "summary_within_cap",
        "chat_not_bare_label",
        "chat_mean_words",
        "route_median_ms",
    ):
        if key not in a:
            continue
        base = b.get(key)
        ratio = f"{a[key] / base:.2f}x" if base else "n/a"
        shown = f"{base:9.3f}" if base is not None else f"{'-':>9}"
        print(f"{key:34} {a[key]:9.3f} {shown} {ratio:>8}")
    labels = ["L0", "L1", "L2", "L3"]
    for who in out:
        conf = out[who]["confusion"]
        print(f"\nrouter confusion ({who}); rows = expected, columns = routed")
        print("      " + "".join(f"{g:>6}" for g in labels))
        for w in labels:
            print(f"{w:6}" + "".join(f"{conf.get(f'{w}->{g}', 0):6}" for g in labels))


if __name__ == "__main__":
    main()
