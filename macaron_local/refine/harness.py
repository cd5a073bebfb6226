"""Harness search with the weights frozen: profile variants over a suite of checkable tasks.

Owns the suite format (``bench/harness_suite/<name>.jsonl``: ``{"id", "label", "prompt",
"checker", "expects"}``), the variants (the base profile; a sharper system prompt; extra
skills; both; both plus a stop-gate hook that checks an answer's *shape* (never its checker)
and asks once more before the answer is final), running each variant as one job on the
served engine (greedy, the adapters the policy serves), the cumulative unique coverage table
job by job, and saving the best variant as a new user profile version that ``extends`` the
base. A variant whose diff is security-relevant (e.g. wider tool exposure) is saved but still
needs ``macaron hcp approve`` before it is served. Must not change weights or the policy record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from macaron_local.errors import RefineError
from macaron_local.experience.checkers import check

SHARP = {  # by role
    "chat": "Answer with the answer itself first, in as few words as the question allows.",
    "coding": "Answer with one complete ```python block that defines exactly the function asked "
    "for, with that name, then at most one sentence.",
}
SKILLS = {  # by role
    "chat": [
        "A question about one word, name or number: reply with just that word, name or number.",
        "A request for a list: one item per line, each line starting with '- '.",
        "When told to reply with only something, reply with exactly that and nothing else.",
    ],
    "coding": ["Keep the exact function name and argument names from the request."],
}
NUDGE = {
    "code": "Give the complete function in a ```python code block.",
    "number": "Reply with the number only.",
    "short": "Reply in at most five words.",
    "exact": "Reply with exactly what was asked for and nothing else.",
    "list": "Reply with a list: one item per line, each line starting with '- '.",
}


@dataclass(frozen=True)
class Variant:
    name: str
    prompt: bool = False
    skills: bool = False
    hook: bool = False


VARIANTS = (
    Variant("base"),
    Variant("prompt", prompt=True),
    Variant("skills", skills=True),
    Variant("prompt+skills", prompt=True, skills=True),
    Variant("prompt+skills+stop-gate", prompt=True, skills=True, hook=True),
)


@dataclass
class SearchResult:
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per job
    best: str = ""
    saved: Path | None = None
    needs_approval: list[str] = field(default_factory=list)
    summary: str = ""


def load_suite(suite: str) -> list[dict[str, Any]]:
    path = Path(suite)
    if not path.exists():
        path = Path(__file__).resolve().parents[2] / "bench" / "harness_suite" / f"{suite}.jsonl"
    if path.is_dir():
        path = path / "default.jsonl"
    if not path.is_file():
        raise RefineError(f"no harness suite {suite!r}", hint="see bench/harness_suite/")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def apply(profile: Any, v: Variant) -> Any:
    """The profile with the variant's prompt and skill changes (a new, validated Profile)."""
    from macaron_local.hcp import Profile

    data = profile.model_dump(mode="python")
    for label, spec in data["prompts"].items():
        for role in profile.roles_of(label):
            if v.prompt and role in SHARP:
                spec["system"] = f"{spec['system'].rstrip()} {SHARP[role]}"
            if v.skills and role in SKILLS:
                spec["skills"] = [*spec.get("skills", []), *SKILLS[role]]
    return Profile.model_validate(data)


def shape_ok(expects: str, answer: str) -> bool:
    """The stop-gate: a cheap check of the answer's form before it is final."""
    text = answer.strip()
    if expects == "code":
        return "```" in text and "def " in text
    if expects == "number":
        return bool(re.search(r"\d", text)) and len(text.split()) <= 12
    if expects in ("short", "exact"):
        return 0 < len(text.split()) <= (6 if expects == "exact" else 15)
    if expects == "list":
        return len(re.findall(r"(?m)^\s*[-*•]", text)) >= 2
    return True


def answer(
    engine: Any,
    bindings: Mapping[str, Any],
    profile: Any,
    tools: Mapping[str, str],
    task: Mapping[str, Any],
    hook: bool,
) -> str:
    from macaron_local.engine import Sampling

    label = task["label"]
    allowed = tools if profile.tool_patterns(label) else {}
    msgs = [
        {"role": "system", "content": profile.system_prompt(label, allowed)},
        {"role": "user", "content": task["prompt"]},
    ]
    budget = 160 if task.get("expects") == "code" else 48
    adapter = bindings[label].adapter if label in bindings else None

    def run(m: Sequence[Mapping[str, str]]) -> str:
        return engine.complete(
            engine.render_chat(m),
            adapter=adapter,
            slot=f"harness:{label}",
            max_tokens=budget,
            sampling=Sampling(temperature=0.0),
        ).text

    text = run(msgs)
    if hook and not shape_ok(task.get("expects", ""), text):
        nudge = NUDGE.get(task.get("expects", ""), "Answer the request exactly.")
        text = run(
            [*msgs, {"role": "assistant", "content": text}, {"role": "user", "content": nudge}]
        )
    return text


def run_search(
    suite: str,
    *,
    profile_id: str = "tall-local",
    budget: int = 5,
    limit: int = 0,
    write: bool = True,
    echo: Callable[[str], None] = print,
    runtime: Any = None,
) -> SearchResult:
    """Run ``budget`` variants (one job each) and print cumulative coverage job by job."""
    from macaron_local.turns.pipeline import Runtime

    tasks = load_suite(suite)
    tasks = tasks[:limit] if limit else tasks
    own = runtime is None
    rt = runtime or Runtime.open(profile_id)
    res = SearchResult()
    covered: set[str] = set()
    try:
        echo(f"{'job':>3}  {'variant':<26}{'solved':>8}{'new':>5}{'coverage':>10}")
        for job, v in enumerate(VARIANTS[: max(1, budget)], 1):
            prof = apply(rt.profile, v)
            solved = {
                t["id"]
                for t in tasks
                if check(t["checker"], answer(rt.engine, rt.bindings, prof, rt.tools, t, v.hook))
            }
            new = solved - covered
            covered |= solved
            res.rows.append(
                {
                    "job": job,
                    "variant": v.name,
                    "solved": len(solved),
                    "new": len(new),
                    "coverage": len(covered),
                    "tasks": len(tasks),
                    "solved_ids": sorted(solved),
                }
            )
            echo(
                f"{job:>3}  {v.name:<26}{len(solved):>5}/{len(tasks):<3}{len(new):>4}"
                f"{len(covered):>6}/{len(tasks)}"
            )
    finally:
        if own:
            rt.close()
    best = max(res.rows, key=lambda r: (r["solved"], -r["job"]))
    res.best = best["variant"]
    if write and best["variant"] != "base":
        v = next(x for x in VARIANTS if x.name == best["variant"])
        res.saved, res.needs_approval = save_variant(rt.profile, v)
    res.summary = (
        f"coverage {res.rows[0]['coverage']}/{len(tasks)} (base) -> "
        f"{len(covered)}/{len(tasks)} after {len(res.rows)} jobs; best single variant "
        f"{res.best} ({best['solved']}/{len(tasks)})"
        + (f"; saved {res.saved}" if res.saved else "")
    )
    return res


def save_variant(base: Any, v: Variant) -> tuple[Path, list[str]]:
    """Write the variant as ``<config>/profiles/<id>-harness.toml`` extending the base."""
    import tomli_w

    from macaron_local.hcp import security_changes, user_dir

    new = apply(base, v)
    changes = [f"{c.path}: {c.reason}" for c in security_changes(base, new)]
    doc: dict[str, Any] = {
        "schema_version": 1,
        "extends": base.id,
        "profile": {
            "id": f"{base.id}-harness",
            "version": f"{base.profile.version}+{v.name}",
            "description": f"{base.id} with harness variant {v.name!r} (macaron refine harness)",
        },
        "prompts": {
            lb: {"system": new.prompts[lb].system, "skills": list(new.prompts[lb].skills)}
            for lb in new.prompts
            if new.prompts[lb] != base.prompts[lb]
        },
    }
    folder = user_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base.id}-harness.toml"
    note = "# the stop-gate hook has no profile field yet: it runs only inside the harness\n"
    path.write_text((note if v.hook else "") + tomli_w.dumps(doc), encoding="utf-8")
    return path, changes
