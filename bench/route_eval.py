"""Router quality: route every line of the held-out evaluation set through ``Runtime.route``.

Run ``python bench/route_eval.py [--profile P] [--baseline-profile B] [--file F ...] [--limit N]
[--json OUT]``. Each line of the held-out sets (``text``, ``label``, ``style``, optionally
``context``: the previous turn; never training data) is routed exactly as a turn would be (the
profile's router prompt, grammar and decode budget, its L0 adapter, the previous turn's label and
digest when the line has a context). ``--file`` may be given several times: each set is reported
on its own (accuracy, per-label recall, follow-up accuracy, confusion) and then pooled. Prints
accuracy, per-label precision/recall/F1, the confusion matrix (gold rows, routed columns; a
fallback counts as the fallback label it returns), accuracy per style, label
compliance (share of routes that produced a valid label vs fell back), and route latency.

``--baseline-profile`` evaluates the same lines under a second profile, normally one whose L0
revision is "none" (the base model routing without the L0 adapter), and prints both side by side
with their ratio. A benchmark, not a test: asserts nothing, never collected by pytest. It opens
each runtime on a store in a temporary folder, so it writes nothing outside it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

EVAL_FILE = Path(__file__).resolve().parent / "eval" / "route_eval.jsonl"


def load_items(path: Path, limit: int | None, spread: int | None = None) -> list[dict[str, Any]]:
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for item in items:
        item["set"] = path.stem
    if spread and len(items) > spread:  # an even spread, not the first N (some sets are grouped)
        step = len(items) / spread
        items = [items[int(i * step)] for i in range(spread)]
    return items[:limit] if limit else items


def previous_of(item: dict[str, Any]) -> tuple[str, str] | None:
    """The previous turn (label, digest) of a line's ``context``, or None.

    Set E's context is ``{"previous_label", "previous_request"}``: the digest the pipeline gives
    the route hop is the previous turn's request (or its summary).
    """
    ctx = item.get("context")
    if not ctx:
        return None
    try:
        return (str(ctx["previous_label"]), str(ctx["previous_request"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"unreadable context in {item.get('set')}: {ctx!r:.80}") from exc


def route_all(
    profile: str, items: list[dict[str, Any]], quiet: bool, context: bool = True
) -> dict[str, Any]:
    """Open a runtime for ``profile`` and route every item; returns the raw rows and facts."""
    from macaron_local.turns.pipeline import Runtime
    from macaron_local.turns.route import route

    with tempfile.TemporaryDirectory(prefix="route-eval-") as tmp:
        started = time.perf_counter()
        rt = Runtime.open(profile, db_path=Path(tmp) / "eval.db")
        open_s = time.perf_counter() - started
        try:
            l0 = rt.bindings.get("L0")
            facts = {
                "profile": rt.profile.id,
                "profile_hash": rt.profile.content_hash,
                "l0_revision": l0.revision if l0 else None,
                "labels": list(rt.profile.labels),
                "fallback": rt.profile.router.fallback,
                "open_s": round(open_s, 2),
                "warnings": rt.warnings,
            }
            rows = []
            for i, item in enumerate(items):
                previous = previous_of(item) if context else None
                r = route(
                    rt.engine,
                    rt.profile,
                    item["text"],
                    adapter=l0.adapter if l0 else None,
                    tools=rt.tools,
                    previous=previous,
                )
                rows.append(
                    {
                        "set": item["set"],
                        "followup": "context" in item,
                        "gold": item["label"],
                        "style": item.get("style", "?"),
                        "label": r.label,
                        "kind": r.kind,
                        "ms": r.ms,
                        "probs": r.probs,
                        "error": r.error,
                    }
                )
                if not quiet and (i + 1) % 20 == 0:
                    print(f"  {profile}: {i + 1}/{len(items)}", file=sys.stderr, flush=True)
        finally:
            rt.close()
    return {**facts, "rows": rows}


def _pct(num: float, den: float) -> float | None:
    return round(100 * num / den, 1) if den else None


def metrics(result: dict[str, Any]) -> dict[str, Any]:
    """The pooled figures, and the same figures for each set when there are several."""
    out = _metrics(result["rows"], result["labels"])
    sets = sorted({r["set"] for r in result["rows"]})
    if len(sets) > 1:
        out["per_set"] = {
            name: _metrics([r for r in result["rows"] if r["set"] == name], result["labels"])
            for name in sets
        }
    return out


def _metrics(rows: list[dict[str, Any]], labels: list[str]) -> dict[str, Any]:
    n = len(rows)
    correct = sum(r["label"] == r["gold"] for r in rows)
    confusion = {g: Counter() for g in labels}
    for r in rows:
        confusion.setdefault(r["gold"], Counter())[r["label"]] += 1
    per_label = {}
    for lab in labels:
        tp = confusion.get(lab, Counter())[lab]
        routed = sum(c[lab] for c in confusion.values())
        gold = sum(confusion.get(lab, Counter()).values())
        p, rc = _pct(tp, routed), _pct(tp, gold)
        f1 = round(2 * p * rc / (p + rc), 1) if p and rc else None
        per_label[lab] = {"precision": p, "recall": rc, "f1": f1, "gold": gold, "routed": routed}
    styles: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        styles[r["style"]].append(r["label"] == r["gold"])
    ms = sorted(r["ms"] for r in rows)
    auto = sum(r["kind"] == "auto" for r in rows)
    follow = [r["label"] == r["gold"] for r in rows if r.get("followup")]
    errors = Counter((r["error"] or "").split(":")[0] for r in rows if r["kind"] != "auto")
    return {
        "n": n,
        "accuracy": _pct(correct, n),
        "per_label": per_label,
        "confusion": {g: dict(c) for g, c in confusion.items()},
        "per_style": {
            s: {"n": len(v), "accuracy": _pct(sum(v), len(v))} for s, v in sorted(styles.items())
        },
        "followup": {"n": len(follow), "accuracy": _pct(sum(follow), len(follow))},
        "compliance": _pct(auto, n),
        "fallbacks": n - auto,
        "fallback_errors": dict(errors),
        "ms_median": round(statistics.median(ms), 1) if ms else None,
        "ms_p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1) if ms else None,
    }


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v}"


def _ratio(a: Any, b: Any) -> str:
    if isinstance(a, int | float) and isinstance(b, int | float) and b:
        return f"{a / b:.2f}x"
    return "-"


def print_report(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    names = [f"{r['profile']} (L0 {str(r['l0_revision'])[:12]})" for r, _ in results]
    for (res, m), name in zip(results, names, strict=True):
        labels = res["labels"]
        print(f"\n## {name}: {m['n']} requests, profile {res['profile_hash'][:19]}")
        for w in res["warnings"]:
            print(f"warning: {w}")
        why = f" {m['fallback_errors']}" if m["fallbacks"] else ""
        print(
            f"accuracy {m['accuracy']}%   label compliance {m['compliance']}% "
            f"({m['fallbacks']} fallbacks{why})"
            f"   route ms median {m['ms_median']} p95 {m['ms_p95']}"
            f"   follow-ups {_fmt(m['followup']['accuracy'])}% of {m['followup']['n']}"
        )
        if "per_set" in m:
            print_sets(m["per_set"], labels)
        print("\n| label | precision % | recall % | F1 | gold | routed |")
        print("|---|---:|---:|---:|---:|---:|")
        for lab, v in m["per_label"].items():
            print(
                f"| {lab} | {_fmt(v['precision'])} | {_fmt(v['recall'])} | {_fmt(v['f1'])} "
                f"| {v['gold']} | {v['routed']} |"
            )
        cols = labels + sorted({k for c in m["confusion"].values() for k in c} - set(labels))
        print("\n| gold \\ routed | " + " | ".join(cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for gold, c in m["confusion"].items():
            print(f"| {gold} | " + " | ".join(str(c.get(k, 0)) for k in cols) + " |")
        print("\n| style | n | accuracy % |")
        print("|---|---:|---:|")
        for style, v in m["per_style"].items():
            print(f"| {style} | {v['n']} | {_fmt(v['accuracy'])} |")
    if len(results) == 2:
        (_, a), (_, b) = results
        a_sets, b_sets = a.get("per_set", {}), b.get("per_set", {})
        print(f"\n## side by side: {names[0]} vs baseline {names[1]}")
        print("\n| metric | profile | baseline | ratio |")
        print("|---|---:|---:|---:|")
        pairs = [
            ("accuracy %", a["accuracy"], b["accuracy"]),
            ("label compliance %", a["compliance"], b["compliance"]),
            ("route ms median", a["ms_median"], b["ms_median"]),
            ("route ms p95", a["ms_p95"], b["ms_p95"]),
            ("follow-up accuracy %", a["followup"]["accuracy"], b["followup"]["accuracy"]),
        ]
        pairs += [
            (f"{name} accuracy %", v["accuracy"], b_sets.get(name, {}).get("accuracy"))
            for name, v in a_sets.items()
        ]
        pairs += [
            (
                f"{lab} recall %",
                a["per_label"][lab]["recall"],
                b["per_label"].get(lab, {}).get("recall"),
            )
            for lab in a["per_label"]
        ]
        pairs += [
            (f"{s} accuracy %", v["accuracy"], b["per_style"].get(s, {}).get("accuracy"))
            for s, v in a["per_style"].items()
        ]
        for name, x, y in pairs:
            print(f"| {name} | {_fmt(x)} | {_fmt(y)} | {_ratio(x, y)} |")


def print_sets(per_set: dict[str, dict[str, Any]], labels: list[str]) -> None:
    recall_cols = " | ".join(f"{lab} recall %" for lab in labels)
    print(f"\n| set | n | accuracy % | {recall_cols} | follow-ups % (n) |")
    print("|---|---:|---:|" + "---:|" * (len(labels) + 1))
    for name, v in per_set.items():
        recalls = " | ".join(_fmt(v["per_label"][lab]["recall"]) for lab in labels)
        f = v["followup"]
        print(
            f"| {name} | {v['n']} | {_fmt(v['accuracy'])} | {recalls} "
            f"| {_fmt(f['accuracy'])} ({f['n']}) |"
        )
    for name, v in per_set.items():
        rows = "; ".join(
            f"{gold} -> " + " ".join(f"{k}:{c.get(k, 0)}" for k in labels)
            for gold, c in v["confusion"].items()
        )
        print(f"\nconfusion of {name} (gold -> routed): {rows}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="tall-local")
    ap.add_argument(
        "--baseline-profile",
        default=None,
        help="a profile to compare with, e.g. one whose L0 revision is 'none'",
    )
    ap.add_argument(
        "--file",
        type=Path,
        action="append",
        default=None,
        help="an evaluation set (repeat for several; default: route_eval.jsonl)",
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N lines")
    ap.add_argument("--spread", type=int, default=None, help="N lines of each set, evenly spread")
    ap.add_argument("--json", type=Path, default=None, help="save rows and metrics here")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--no-context",
        action="store_true",
        help="route follow-ups without their previous turn (the route hop before issue 23)",
    )
    ap.add_argument(
        "--baseline-no-context",
        action="store_true",
        help="only the baseline routes follow-ups without their previous turn",
    )
    args = ap.parse_args(argv)
    files = args.file or [EVAL_FILE]
    items = [item for f in files for item in load_items(f, args.limit, args.spread)]
    results = []
    for profile in filter(None, (args.profile, args.baseline_profile)):
        bare = args.no_context or (args.baseline_no_context and profile == args.baseline_profile)
        res = route_all(profile, items, args.quiet, context=not bare)
        results.append((res, metrics(res)))
        if profile == args.baseline_profile and res["l0_revision"] not in ("base", None):
            print(
                f"note: the baseline's L0 is served by revision {res['l0_revision']}, "
                "not the base weights",
                file=sys.stderr,
            )
    print(f"# route_eval: {len(items)} lines of {', '.join(f.name for f in files)}")
    print_report(results)
    if args.json:
        args.json.write_text(
            json.dumps([{"metrics": m, **r} for r, m in results], indent=1, ensure_ascii=False)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
