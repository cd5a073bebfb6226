"""Validate the evaluation sets in bench/eval/ (schema, counts, balance, shares) and print tables.

Owns validation only; stdlib only. It never reads models/data/ unless explicitly given
`--against DIR`, which reports any evaluation text that also appears (after normalising case,
punctuation and spaces) in the JSONL files under DIR: the training-leak check for the lead.
Run: python bench/eval/check_sets.py [--against DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABELS = ("L0", "L1", "L2", "L3")
STYLES = (
    "long_paste",
    "terse",
    "typo",
    "api_style",
    "mixed",
    "polite",
    "slang",
    "non_native",
    "boundary",
)
MIN = {
    "route_eval": 400,
    "code_tasks": 30,
    "agent_prompts": 40,
    "genui_prompts": 40,
    "summary_turns": 40,
}
KEYS = {
    "route_eval": {"text", "label", "style"},
    "code_tasks": {"id", "prompt", "entry_point", "tests"},
    "agent_prompts": {"id", "text", "domain"},
    "genui_prompts": {"id", "text", "expect"},
    "summary_turns": {"id", "label", "request", "answer"},
}
BALANCE_TOLERANCE = 0.10
MIN_BOUNDARY_SHARE = 0.20
MIN_TEXT_SHARE = 0.25
LEAK_SUBSTRING_MIN = 24


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def load(name: str) -> list[dict]:
    rows = []
    for number, line in enumerate((HERE / f"{name}.jsonl").read_text("utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            row["_line"] = number
            rows.append(row)
    return rows


def check_schema(name: str, rows: list[dict], errors: list[str]) -> None:
    if len(rows) < MIN[name]:
        errors.append(f"{name}: {len(rows)} lines < {MIN[name]}")
    for row in rows:
        keys = set(row) - {"_line"}
        if keys != KEYS[name]:
            errors.append(f"{name}:{row['_line']}: keys {sorted(keys)} != {sorted(KEYS[name])}")
        for key in KEYS[name] & keys:
            if not isinstance(row[key], str) or not row[key].strip():
                errors.append(f"{name}:{row['_line']}: {key} must be a non-empty string")
    text_key = (
        "request" if name == "summary_turns" else ("prompt" if name == "code_tasks" else "text")
    )
    seen = Counter(normalise(r.get(text_key, "")) for r in rows)
    for text, count in seen.items():
        if count > 1:
            errors.append(f"{name}: duplicate {text_key} x{count}: {text[:60]!r}")
    if "id" in KEYS[name]:
        ids = Counter(r.get("id") for r in rows)
        errors.extend(f"{name}: duplicate id {i}" for i, n in ids.items() if n > 1)


def check_route(rows: list[dict], errors: list[str]) -> None:
    labels = Counter(r.get("label") for r in rows)
    for row in rows:
        if row.get("label") not in LABELS:
            errors.append(f"route_eval:{row['_line']}: bad label {row.get('label')!r}")
        if row.get("style") not in STYLES:
            errors.append(f"route_eval:{row['_line']}: bad style {row.get('style')!r}")
    mean = len(rows) / len(LABELS)
    for label in LABELS:
        if abs(labels[label] - mean) > BALANCE_TOLERANCE * mean:
            errors.append(f"route_eval: {label} has {labels[label]}, outside ±10% of {mean:.1f}")
    boundary = sum(r.get("style") == "boundary" for r in rows) / max(len(rows), 1)
    if boundary < MIN_BOUNDARY_SHARE:
        errors.append(f"route_eval: boundary share {boundary:.1%} < 20%")
    print_route_table(rows)


def print_route_table(rows: list[dict]) -> None:
    counts = Counter((r.get("style"), r.get("label")) for r in rows)
    print("route_eval.jsonl: label x style")
    print(f"  {'style':<12}" + "".join(f"{lab:>6}" for lab in LABELS) + f"{'total':>7}")
    for style in STYLES:
        cells = [counts[(style, lab)] for lab in LABELS]
        print(f"  {style:<12}" + "".join(f"{c:>6}" for c in cells) + f"{sum(cells):>7}")
    totals = [sum(counts[(s, lab)] for s in STYLES) for lab in LABELS]
    print(f"  {'total':<12}" + "".join(f"{c:>6}" for c in totals) + f"{sum(totals):>7}")
    share = sum(counts[("boundary", lab)] for lab in LABELS) / max(len(rows), 1)
    print(f"  boundary share: {share:.1%}\n")


def check_code(rows: list[dict], errors: list[str]) -> None:
    for row in rows:
        entry, tests = row.get("entry_point", ""), row.get("tests", "")
        if not entry.isidentifier():
            errors.append(f"code_tasks:{row['_line']}: entry_point {entry!r} is not a name")
        if entry not in row.get("prompt", "") or entry not in tests or "assert" not in tests:
            errors.append(f"code_tasks:{row['_line']}: prompt/tests must name {entry!r} and assert")
        try:
            compile(tests, f"code_tasks:{row['_line']}", "exec")
        except SyntaxError as exc:
            errors.append(f"code_tasks:{row['_line']}: tests do not compile: {exc}")
    print(
        f"code_tasks.jsonl: {len(rows)} tasks (run check_code_tasks.py to execute the references)\n"
    )


def check_agent(rows: list[dict], errors: list[str]) -> None:
    domains = Counter(r.get("domain") for r in rows)
    print(
        "agent_prompts.jsonl: "
        + ", ".join(f"{d} {n}" for d, n in sorted(domains.items()))
        + f" (total {len(rows)})\n"
    )


def check_genui(rows: list[dict], errors: list[str]) -> None:
    expect = Counter(r.get("expect") for r in rows)
    bad = [r["_line"] for r in rows if r.get("expect") not in ("ui", "text")]
    errors.extend(f"genui_prompts:{line}: expect must be 'ui' or 'text'" for line in bad)
    share = expect["text"] / max(len(rows), 1)
    if share < MIN_TEXT_SHARE:
        errors.append(f"genui_prompts: text share {share:.1%} < 25%")
    print(
        f"genui_prompts.jsonl: ui {expect['ui']}, text {expect['text']} "
        f"(text share {share:.1%}, total {len(rows)})\n"
    )


def check_summary(rows: list[dict], errors: list[str]) -> None:
    for row in rows:
        if row.get("label") not in LABELS:
            errors.append(f"summary_turns:{row['_line']}: bad label {row.get('label')!r}")
    labels = Counter(r.get("label") for r in rows)
    missing = [lab for lab in LABELS if not labels[lab]]
    errors.extend(f"summary_turns: no turn for {lab}" for lab in missing)
    buckets = Counter()
    for row in rows:
        n = len(row.get("answer", ""))
        buckets[
            "<200" if n < 200 else "200-799" if n < 800 else "800-1999" if n < 2000 else ">=2000"
        ] += 1
    print(
        "summary_turns.jsonl: "
        + ", ".join(f"{lab} {labels[lab]}" for lab in LABELS)
        + f" (total {len(rows)})"
    )
    print(
        "  answer length (chars): "
        + ", ".join(f"{b} {buckets[b]}" for b in ("<200", "200-799", "800-1999", ">=2000"))
        + "\n"
    )


def check_cross(sets: dict[str, list[dict]], errors: list[str]) -> None:
    """No request may appear in two of the request sets (summary turns may reuse requests)."""
    owner: dict[str, str] = {}
    for name in ("route_eval", "agent_prompts", "genui_prompts", "code_tasks"):
        rows = sets[name]
        for row in rows:
            text = normalise(row.get("text") or row.get("request") or row.get("prompt") or "")
            if text in owner and owner[text] != name:
                errors.append(f"{name}:{row['_line']}: also in {owner[text]}: {text[:60]!r}")
            owner.setdefault(text, name)


def check_sync(errors: list[str]) -> None:
    """The JSONL files must be exactly what build_sets.py makes from sources/."""
    spec = importlib.util.spec_from_file_location("eval_build_sets", HERE / "build_sets.py")
    if spec is None or spec.loader is None:
        errors.append("build_sets.py not found")
        return
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for filename, make in build.BUILDERS.items():
        if (HERE / filename).read_text("utf-8") != build.render(make()):
            errors.append(f"{filename} is out of date: run build_sets.py")


def check_against(sets: dict[str, list[dict]], folder: Path) -> int:
    """Count evaluation texts found in any string of any JSONL under `folder`.

    Short texts must match a whole string; texts of LEAK_SUBSTRING_MIN+ normalised characters
    also count when they occur inside a longer string (e.g. embedded in a route prompt).
    """
    eval_texts = {
        normalise(r.get("text") or r.get("request") or r.get("prompt") or "")
        for rows in sets.values()
        for r in rows
    }
    eval_texts.discard("")
    hits: set[str] = set()

    long_texts = [t for t in eval_texts if len(t) >= LEAK_SUBSTRING_MIN]

    def walk(value: object) -> None:
        if isinstance(value, str):
            norm = normalise(value)
            if norm in eval_texts:
                hits.add(norm)
            hits.update(t for t in long_texts if t in norm)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                walk(json.loads(line))
    print(f"leak check against {folder}: {len(hits)} evaluation texts found there")
    for text in sorted(hits)[:20]:
        print(f"  {text[:90]!r}")
    return len(hits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="folder of training JSONL to check for leaks")
    args = parser.parse_args(argv)
    errors: list[str] = []
    sets = {name: load(name) for name in MIN}
    for name, rows in sets.items():
        check_schema(name, rows, errors)
    check_route(sets["route_eval"], errors)
    check_code(sets["code_tasks"], errors)
    check_agent(sets["agent_prompts"], errors)
    check_genui(sets["genui_prompts"], errors)
    check_summary(sets["summary_turns"], errors)
    check_cross(sets, errors)
    check_sync(errors)
    leaks = check_against(sets, args.against) if args.against else 0
    for error in errors:
        print(f"ERROR {error}")
    ok = not errors and not leaks
    print("all evaluation sets OK" if ok else f"{len(errors)} errors, {leaks} leaks")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
