"""Validate the evaluation sets in bench/eval/ (schema, counts, balance, shares) and print tables.

Owns validation only; stdlib only. Set E (`route_eval_e.jsonl`, written directly as JSONL) has
its own checks: an optional `context` on follow-up rows, its label and style shares, no
near-duplicates within it, and none of its requests in the other sets (B-D are read only for
that). It never reads models/data/ unless explicitly given
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
SET_E = "route_eval_e"
E_STYLES = (
    "polite_long",
    "api_call",
    "multi_ask",
    "terse",
    "typo_esl",
    "smalltalk",
    "contrast",
    "followup",
)
E_MIN_LINES = 380
E_MIN_FOLLOWUPS = 60
E_MIN_L1_SHARE = 0.35
E_MIN_OTHER_SHARE = 0.15
E_MIN_LABELS_PER_STYLE = 3
E_NEAR_DUPLICATE = 0.5
OTHER_ROUTE_SETS = ("route_eval_b", "route_eval_c", "route_eval_d")
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


def print_style_table(name: str, rows: list[dict], styles: tuple[str, ...]) -> Counter:
    """Print the label x style counts of a routing set; return them."""
    counts = Counter((r.get("style"), r.get("label")) for r in rows)
    print(f"{name}.jsonl: label x style")
    print(f"  {'style':<12}" + "".join(f"{lab:>6}" for lab in LABELS) + f"{'total':>7}")
    for style in styles:
        cells = [counts[(style, lab)] for lab in LABELS]
        print(f"  {style:<12}" + "".join(f"{c:>6}" for c in cells) + f"{sum(cells):>7}")
    totals = [sum(counts[(s, lab)] for s in styles) for lab in LABELS]
    print(f"  {'total':<12}" + "".join(f"{c:>6}" for c in totals) + f"{sum(totals):>7}")
    return counts


def print_route_table(rows: list[dict]) -> None:
    counts = print_style_table("route_eval", rows, STYLES)
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


def words(text: str) -> set[str]:
    return set(normalise(text).split())


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a | b), 1)


def previous_request(row: dict) -> str:
    context = row.get("context")
    request = context.get("previous_request") if isinstance(context, dict) else None
    return request if isinstance(request, str) else ""


def e_key(row: dict) -> str:
    """A follow-up is its text in its context: the same short text may recur with other contexts."""
    return normalise(str(row.get("text", ""))) + " | " + normalise(previous_request(row))


def check_e_row(row: dict, errors: list[str]) -> None:
    where = f"{SET_E}:{row['_line']}"
    keys = set(row) - {"_line"}
    followup = row.get("style") == "followup"
    expected = KEYS["route_eval"] | ({"context"} if followup else set())
    if keys != expected:
        errors.append(f"{where}: keys {sorted(keys)} != {sorted(expected)}")
    if not isinstance(row.get("text"), str) or not row["text"].strip():
        errors.append(f"{where}: text must be a non-empty string")
    if row.get("label") not in LABELS:
        errors.append(f"{where}: bad label {row.get('label')!r}")
    if row.get("style") not in E_STYLES:
        errors.append(f"{where}: bad style {row.get('style')!r}")
    context = row.get("context")
    if followup and (
        not isinstance(context, dict)
        or set(context) != {"previous_label", "previous_request"}
        or context["previous_label"] not in LABELS
        or not isinstance(context["previous_request"], str)
        or not context["previous_request"].strip()
    ):
        errors.append(f"{where}: context must be {{previous_label: L0-L3, previous_request: text}}")


def check_e_counts(rows: list[dict], errors: list[str]) -> None:
    if len(rows) < E_MIN_LINES:
        errors.append(f"{SET_E}: {len(rows)} lines < {E_MIN_LINES}")
    labels = Counter(r.get("label") for r in rows)
    total = max(len(rows), 1)
    if labels["L1"] / total < E_MIN_L1_SHARE:
        errors.append(f"{SET_E}: L1 share {labels['L1'] / total:.1%} < {E_MIN_L1_SHARE:.0%}")
    for label in ("L0", "L2", "L3"):
        if labels[label] / total < E_MIN_OTHER_SHARE:
            errors.append(f"{SET_E}: {label} share {labels[label] / total:.1%} < 15%")
    followups = [r for r in rows if r.get("style") == "followup"]
    if len(followups) < E_MIN_FOLLOWUPS:
        errors.append(f"{SET_E}: {len(followups)} follow-ups < {E_MIN_FOLLOWUPS}")
    for style in E_STYLES:
        spread = {r.get("label") for r in rows if r.get("style") == style}
        if len(spread) < E_MIN_LABELS_PER_STYLE:
            errors.append(f"{SET_E}: style {style} covers {len(spread)} labels < 3")


def check_e_duplicates(rows: list[dict], errors: list[str]) -> None:
    """No repeated request, and no two requests within word-Jaccard E_NEAR_DUPLICATE."""
    seen = Counter(e_key(r) for r in rows)
    errors.extend(f"{SET_E}: duplicate x{n}: {k[:60]!r}" for k, n in seen.items() if n > 1)
    for i, row_a in enumerate(rows):
        for row_b in rows[i + 1 :]:
            if near_duplicates(row_a, row_b):
                errors.append(f"{SET_E}:{row_a['_line']} and :{row_b['_line']} are near-duplicates")


def near_duplicates(row_a: dict, row_b: dict) -> bool:
    """Close requests, a follow-up read with its context; two follow-ups only when both their
    texts and their contexts are close (the same short follow-up in another conversation is a
    different case on purpose)."""
    if not (previous_request(row_a) and previous_request(row_b)):
        return jaccard(words(e_key(row_a)), words(e_key(row_b))) >= E_NEAR_DUPLICATE
    if jaccard(words(str(row_a["text"])), words(str(row_b["text"]))) < E_NEAR_DUPLICATE:
        return False
    return (
        jaccard(words(previous_request(row_a)), words(previous_request(row_b))) >= E_NEAR_DUPLICATE
    )


def check_e_against_sets(rows: list[dict], sets: dict[str, list[dict]], errors: list[str]) -> None:
    """No set-E text may appear (normalised) in sets A-D or the request sets, nor come within
    word-Jaccard E_NEAR_DUPLICATE of one (a follow-up is compared with its context).

    Only set E's own line and text are printed, so its author never reads the other sets.
    """
    others = {name: rows_ for name, rows_ in sets.items() if name != SET_E}
    others.update({name: load(name) for name in OTHER_ROUTE_SETS})
    owner: dict[str, str] = {}
    for name, other_rows in others.items():
        for row in other_rows:
            text = normalise(row.get("text") or row.get("request") or row.get("prompt") or "")
            owner.setdefault(text, name)
    bags = [(name, words(text)) for text, name in owner.items()]
    for row in rows:
        text = normalise(str(row.get("text", "")))
        if text in owner:
            errors.append(f"{SET_E}:{row['_line']}: also in {owner[text]}: {text[:60]!r}")
        mine = words(e_key(row))
        near = [name for name, bag in bags if jaccard(mine, bag) >= E_NEAR_DUPLICATE]
        if near:
            errors.append(f"{SET_E}:{row['_line']}: near-duplicate of a line in {near[0]}")


def check_e(rows: list[dict], sets: dict[str, list[dict]], errors: list[str]) -> None:
    for row in rows:
        check_e_row(row, errors)
    check_e_counts(rows, errors)
    check_e_duplicates(rows, errors)
    check_e_against_sets(rows, sets, errors)
    print_e_table(rows)


def print_e_table(rows: list[dict]) -> None:
    print_style_table(SET_E, rows, E_STYLES)
    followups = [r for r in rows if r.get("style") == "followup" and previous_request(r)]
    by_text: dict[str, set[str]] = {}
    for row in followups:
        by_text.setdefault(normalise(str(row.get("text"))), set()).add(row.get("label"))
    changed = sum(r.get("label") != r["context"].get("previous_label") for r in followups)
    print(
        f"  follow-ups: {len(followups)} ({changed} change label from the previous turn); "
        f"{len(by_text)} texts, {sum(len(v) > 1 for v in by_text.values())} with a gold label "
        "that depends on the context\n"
    )


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


def set_e_leak_texts(rows: list[dict]) -> set[str]:
    """Set E's texts and follow-up contexts; a short follow-up ("run it") alone is no leak."""
    texts = set()
    for row in rows:
        text = normalise(str(row.get("text", "")))
        if row.get("style") != "followup" or len(text) >= LEAK_SUBSTRING_MIN:
            texts.add(text)
        texts.add(normalise(previous_request(row)))
    return texts


def check_against(sets: dict[str, list[dict]], folder: Path) -> int:
    """Count evaluation texts found in any string of any JSONL under `folder`.

    Short texts must match a whole string; texts of LEAK_SUBSTRING_MIN+ normalised characters
    also count when they occur inside a longer string (e.g. embedded in a route prompt).
    """
    eval_texts = {
        normalise(r.get("text") or r.get("request") or r.get("prompt") or "")
        for name, rows in sets.items()
        if name != SET_E
        for r in rows
    }
    eval_texts.update(set_e_leak_texts(sets.get(SET_E, [])))
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
    sets[SET_E] = load(SET_E)
    check_e(sets[SET_E], sets, errors)
    check_sync(errors)
    leaks = check_against(sets, args.against) if args.against else 0
    for error in errors:
        print(f"ERROR {error}")
    ok = not errors and not leaks
    print("all evaluation sets OK" if ok else f"{len(errors)} errors, {leaks} leaks")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
