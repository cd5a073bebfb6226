"""Build the evaluation JSONL files in bench/eval/ from the hand-written sources/ modules.

Owns only the conversion sources/*.py -> *.jsonl (deterministic: same sources, same bytes).
Must not read anything under models/data/ and must not be used to make training data.
Run: python bench/eval/build_sets.py
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
ROUTE_MODULES = ("route_l0", "route_l1", "route_l2", "route_l3")
SHUFFLE_SEED = 20250514


def load_source(name: str) -> ModuleType:
    """Import sources/<name>.py by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"eval_sources_{name}", SOURCES / f"{name}.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(SOURCES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def route_rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name in ROUTE_MODULES:
        module = load_source(name)
        rows.extend(
            {"text": text, "label": module.LABEL, "style": style} for style, text in module.ITEMS
        )
    random.Random(SHUFFLE_SEED).shuffle(rows)
    return rows


def code_rows() -> list[dict[str, str]]:
    tasks = load_source("code_tasks").TASKS
    return [
        {"id": t["id"], "prompt": t["prompt"], "entry_point": t["entry_point"], "tests": t["tests"]}
        for t in tasks
    ]


def agent_rows() -> list[dict[str, str]]:
    items = load_source("agent_prompts").ITEMS
    return [
        {"id": f"ag{i:02d}", "text": text, "domain": domain}
        for i, (domain, text) in enumerate(items, 1)
    ]


def genui_rows() -> list[dict[str, str]]:
    items = load_source("genui_prompts").ITEMS
    return [
        {"id": f"ui{i:02d}", "text": text, "expect": expect}
        for i, (expect, text) in enumerate(items, 1)
    ]


def summary_rows() -> list[dict[str, str]]:
    turns = load_source("summary_turns").TURNS
    return [
        {"id": f"st{i:02d}", "label": label, "request": request, "answer": answer}
        for i, (label, request, answer) in enumerate(turns, 1)
    ]


BUILDERS = {
    "route_eval.jsonl": route_rows,
    "code_tasks.jsonl": code_rows,
    "agent_prompts.jsonl": agent_rows,
    "genui_prompts.jsonl": genui_rows,
    "summary_turns.jsonl": summary_rows,
}


def render(rows: list[dict[str, str]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> int:
    for filename, build in BUILDERS.items():
        rows = build()
        (HERE / filename).write_text(render(rows), encoding="utf-8")
        print(f"wrote {filename}: {len(rows)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
