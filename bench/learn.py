"""End-to-end learning experiment: a simulated user teaches the assistant about themself.

A deterministic simulated user talks to the real runtime (llama.cpp, the embedded base) for 30
turns: 10 facts and preferences about themself, each asked three ways. When an answer does not
contain the fact, the user corrects it (the corrected answer is kept); when it does, they give
a thumbs up. Each turn carries an automatic checker (the fact must appear), so the GRPO-style
update has work. Then ``refine run`` trains a new L0 revision from the experience log, gated.
Measured before and after, on the served engine (llama.cpp, greedy): success on 20 held-out
paraphrases the user never asked, and the gate's regression suite (routing accuracy on
``bench/eval/route_eval.jsonl``, answer NLL on ``summary_turns.jsonl``).

    nice -n 19 python bench/learn.py [--regression-limit 200] [--out FILE]
        [--steps N] [--lr X] [--replay R] [--dpo-weight W] [--kl K]

Unset training options take ``RefineConfig``'s defaults: the run is what ``macaron refine run``
does for a user.

Runs in a fresh temporary MACARON_HOME (opt-in on, nothing of yours is touched).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from macaron_local.turns.turn import TurnRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (keyword the answer must contain, correction, three training phrasings, two held-out ones)
FACTS = [
    (
        "Biscuit",
        "Your dog is called Biscuit.",
        ["What is my dog's name?", "what's my dog called", "Remind me of my dog's name."],
        ["Do you remember what I named my dog?", "My dog's name, what was it again?"],
    ),
    (
        "Tromsø",
        "You live in Tromsø, in northern Norway.",
        ["Where do I live?", "which city do I live in", "Remind me where my home is."],
        ["What town is my home?", "In which city is my house?"],
    ),
    (
        "teal",
        "Your favourite colour is teal.",
        [
            "What is my favourite colour?",
            "which colour do I like best",
            "Remind me of my favourite colour.",
        ],
        ["What colour do I love most?", "Tell me my favorite color."],
    ),
    (
        "beekeeper",
        "You work as a beekeeper.",
        ["What is my job?", "what do I do for a living", "Remind me what my job is."],
        ["What is my profession?", "What work do I do?"],
    ),
    (
        "12 March",
        "Your birthday is on 12 March.",
        ["When is my birthday?", "what date is my birthday", "Remind me when my birthday is."],
        ["On which day was I born?", "What day is my birthday on?"],
    ),
    (
        "green tea",
        "You drink green tea every morning.",
        [
            "What do I drink in the morning?",
            "what's my morning drink",
            "Remind me what I drink at breakfast.",
        ],
        ["Which drink do I have each morning?", "What do I usually drink when I wake up?"],
    ),
    (
        "Priya",
        "Your sister is called Priya.",
        ["What is my sister's name?", "what's my sister called", "Remind me of my sister's name."],
        ["Who is my sister?", "What was my sister's name again?"],
    ),
    (
        "cello",
        "You play the cello.",
        [
            "Which instrument do I play?",
            "what instrument do I play",
            "Remind me what instrument I play.",
        ],
        ["What musical instrument do I play?", "Which instrument am I learning?"],
    ),
    (
        "vegetarian",
        "You are vegetarian, so suggest meals without meat or fish.",
        ["What is my diet?", "what kind of food do I eat", "Remind me of my diet."],
        ["Do I eat meat?", "What diet do I follow?"],
    ),
    (
        "bullet",
        "You like short answers in bullet points.",
        [
            "How do I like my answers?",
            "what answer style do I prefer",
            "Remind me how I like replies formatted.",
        ],
        ["What format should your replies to me have?", "How should you format answers for me?"],
    ),
]


def bench_profile(home: Path) -> None:
    """tall-local, self-contained (the bundled adapters may still be training: labels without
    one serve the base), with short greedy answers; approved in the bench's own store."""
    import tomllib

    import tomli_w

    from macaron_local import paths
    from macaron_local.hcp import approve, load_profile
    from macaron_local.manifests import EMBEDDED_ID, get_manifest
    from macaron_local.store import open_db

    doc = tomllib.loads((paths.bundled("hcp_profiles") / "tall-local.toml").read_text())
    m = get_manifest(EMBEDDED_ID)
    for lb, spec in doc["adapters"].items():
        if spec["revision"] == "bundled" and m.adapter(lb) is None:
            spec["revision"] = "none"
    doc["profile"].update(id="learn-bench", version="1", description="bench/learn.py")
    doc["summary"]["max_tokens"] = 16
    doc["sampling"]["defaults"].update(temperature=0.0, max_tokens=40)
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "learn-bench.toml").write_text(tomli_w.dumps(doc))
    approve(open_db(home / "data" / "macaron.db"), load_profile("learn-bench"), "bench/learn.py")


def served_success(runtime, prompts, keyword_of, adapter=None, max_tokens=40) -> dict:
    """Greedy answers on the llama.cpp engine, with the L0 system prompt of a fresh chat."""
    from macaron_local.engine import Sampling

    ok, answers = 0, []
    system = runtime.profile.system_prompt("L0", runtime.tools)
    for q in prompts:
        prompt = runtime.engine.render_chat(
            [{"role": "system", "content": system}, {"role": "user", "content": q}]
        )
        text = runtime.engine.complete(
            prompt,
            adapter=adapter,
            slot=f"bench:{adapter}",
            max_tokens=max_tokens,
            sampling=Sampling(temperature=0.0),
        ).text
        hit = keyword_of[q].lower() in text.lower()
        ok += hit
        answers.append({"q": q, "hit": hit, "answer": text.strip()[:160]})
    return {"success": ok / len(prompts), "n": len(prompts), "answers": answers}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--regression-limit", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None)
    # Unset: RefineConfig's defaults, i.e. what `macaron refine run` does for a user.
    ap.add_argument("--steps", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--replay", type=float, help="replay rows per experience row")
    ap.add_argument("--dpo-weight", type=float)
    ap.add_argument("--kl", type=float, help="weight of KL(parent || new) on the replay rows")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="macaron-learn-"))
    os.environ["MACARON_HOME"] = str(home)
    bench_profile(home)

    import torch

    from macaron_local import experience
    from macaron_local.refine.gate import GateConfig
    from macaron_local.refine.refine_loop import RefineConfig, run_refine
    from macaron_local.turns.pipeline import Runtime

    torch.set_num_threads(1)
    experience.set_user_choice(True)
    t0 = time.perf_counter()
    runtime = Runtime.open("learn-bench", db_path=home / "data" / "macaron.db")
    profile, db = runtime.profile, runtime.db()
    keyword_of = {q: k for k, _, train, held in FACTS for q in train + held}
    train_qs = [q for i in range(3) for _, _, train, _ in FACTS for q in train[i : i + 1]]
    held_qs = [q for _, _, _, held in FACTS for q in held]
    correction_of = {q: c for _, c, train, _ in FACTS for q in train}
    ups = corrections = 0
    for q in train_qs:  # 30 turns, each in a fresh chat, pinned to L0 (the chat specialist)
        sid = runtime.new_session("learn bench").id
        res = runtime.run_turn(
            TurnRequest(sid, q, label="L0")
        )  # opted in: the runtime keeps the turn
        from macaron_local.store import get_turn

        turn = get_turn(db, res.id)
        if not experience.attach_checker(
            db, turn.id, {"kind": "contains", "expect": [keyword_of[q]]}
        ):
            raise SystemExit(f"the runtime did not keep turn {turn.id} (opt-in is on)")
        if keyword_of[q].lower() in turn.answer.lower():
            experience.record_feedback(db, profile, turn.id, "up")
            ups += 1
        else:
            experience.record_feedback(db, profile, turn.id, "correction", correction_of[q])
            corrections += 1
    runtime.finish_pending(timeout=300)
    t_turns = time.perf_counter() - t0
    before_held = served_success(runtime, held_qs, keyword_of)
    before_train = served_success(runtime, train_qs[:10], keyword_of)
    given = {
        "steps": args.steps,
        "lr": args.lr,
        "replay_ratio": args.replay,
        "dpo_weight": args.dpo_weight,
        "kl_weight": args.kl,
    }
    cfg = RefineConfig(
        **{k: v for k, v in given.items() if v is not None},
        gate=GateConfig(regression_limit=args.regression_limit, check_max_tokens=24),
    )
    t1 = time.perf_counter()
    report = run_refine("L0", profile=profile, db=db, config=cfg)
    t_refine = time.perf_counter() - t1
    from macaron_local import lineage

    rev = lineage.get_revision(report.revision)
    runtime.engine.load_adapter("refined", rev.path, base_sha256=rev.base_sha256)
    after_held = served_success(runtime, held_qs, keyword_of, adapter="refined")
    after_train = served_success(runtime, train_qs[:10], keyword_of, adapter="refined")
    runtime.close()
    result = {
        "config": cfg.model_dump(exclude={"gate"}),
        "turns": len(train_qs),
        "thumbs_up": ups,
        "corrections": corrections,
        "heldout_paraphrases": {
            "before": before_held["success"],
            "after": after_held["success"],
            "n": len(held_qs),
        },
        "trained_phrasings": {
            "before": before_train["success"],
            "after": after_train["success"],
            "n": 10,
        },
        "gate": {
            "status": report.status,
            "passed": report.gate_passed,
            "reasons": report.reasons,
            "before": report.before,
            "after": report.after,
        },
        "counts": report.counts,
        "steps": report.steps,
        "sft_loss": [report.sft_loss[0], report.sft_loss[-1]] if report.sft_loss else [],
        "dpo_loss": [report.dpo_loss[0], report.dpo_loss[-1]] if report.dpo_loss else [],
        "kl_loss": [report.kl_loss[0], report.kl_loss[-1]] if report.kl_loss else [],
        "grpo_reward": report.reward,
        "seconds": {
            "turns": round(t_turns),
            "refine": round(t_refine),
            "total": round(time.perf_counter() - t0),
        },
        "report": report.report_json,
        "plots": report.plots,
        "answers_after": after_held["answers"],
        "answers_before": before_held["answers"],
    }
    text = json.dumps(result, indent=1, ensure_ascii=False)
    if args.out:
        args.out.write_text(text)
    print(text)
    print(
        f"\nheld-out paraphrases: {before_held['success']:.0%} -> {after_held['success']:.0%}"
        f" | trained phrasings: {before_train['success']:.0%} -> {after_train['success']:.0%}"
        f" | gate: {report.status} {'; '.join(report.reasons)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
