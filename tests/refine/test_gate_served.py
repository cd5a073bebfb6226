"""The promotion gate measured on the served engine: the embedded base through llama.cpp, the
adapters under test loaded into a real :class:`Engine`; the gate imports no torch."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from macaron_local.engine import Engine
from macaron_local.errors import CancelledError
from macaron_local.experience.datasets import Split, prompt_messages
from macaron_local.hcp import load_profile
from macaron_local.manifests import get_manifest
from macaron_local.refine.gate import GateConfig, run_gate
from macaron_local.turns.adapters import resolve
from macaron_local.turns.tools import tool_descriptions
from tests.conftest import macaron_home
from tests.engine.conftest import QV, make_adapter

EVAL = Path(__file__).resolve().parents[2] / "bench" / "eval"
CFG = GateConfig(regression_limit=4)


@pytest.fixture(scope="module")
def profile() -> Any:
    return load_profile("tall-local")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A runtime of the profile, as the app holds one: its engine is the one the gate uses."""
    from macaron_local.turns.pipeline import Runtime

    home = tmp_path_factory.mktemp("home")
    with macaron_home(home):
        rt = Runtime.open("tall-local", db_path=home / "macaron.db")
    yield rt
    rt.close(finish_summaries=False)


@pytest.fixture(scope="module")
def served(runtime: Any) -> Engine:
    return runtime.engine


@pytest.fixture(scope="module")
def current(profile: Any) -> Path:
    """The GGUF serving the router label now (the shipped L0)."""
    path = resolve(profile, get_manifest(profile.base.model))[profile.router_label].path
    assert path is not None
    return path


@pytest.fixture(scope="module")
def heldout(profile: Any) -> Split:
    """Held-out experience of the router label: follow-up-free routing rows of set D (never
    training data), two corrected answers, a preference pair and a checkable prompt."""
    tools = tool_descriptions()
    rows = [json.loads(line) for line in (EVAL / "route_eval_d.jsonl").read_text().splitlines()]
    routing = [{"text": r["text"], "label": r["label"]} for r in rows if "context" not in r][:6]
    label = profile.router_label

    def convo(q: str, a: str) -> dict[str, Any]:
        msgs = [*prompt_messages(profile, label, q, tools), {"role": "assistant", "content": a}]
        return {"messages": msgs}

    ask = prompt_messages(profile, label, "What is the capital of France?", tools)
    return Split(
        sft=[
            convo("Where do I live?", "You live in Tromsø."),
            convo("What is my job?", "You are a beekeeper."),
        ],
        pairs=[{"prompt": ask, "chosen": "Paris.", "rejected": "I don't know."}],
        routing=routing,
        checkable=[{"prompt": ask, "checker": {"kind": "contains", "expect": ["Paris"]}}],
    )


def _gate(profile: Any, heldout: Split, candidate: Path, parent: Path | None, **kw: Any) -> Any:
    return run_gate(
        candidate,
        parent=parent,
        label=profile.router_label,
        profile=profile,
        heldout=heldout,
        cfg=CFG,
        tools=tool_descriptions(),
        **kw,
    )


def test_a_noise_candidate_is_refused_on_the_runtimes_engine(
    profile: Any,
    heldout: Split,
    runtime: Any,
    served: Engine,
    current: Path,
    model_path: Path,
    tmp_path: Path,
) -> None:
    noise = make_adapter(model_path, tmp_path / "noise.gguf", seed=7, scale=0.3, targets=QV)
    serving = dict(served.adapters)
    run = _gate(profile, heldout, noise, current, engine=served)
    assert not run.decision.passed
    assert any(r.startswith("regression suite route_acc regressed") for r in run.decision.reasons)
    assert run.after["regression"]["answer_nll"] > run.before["regression"]["answer_nll"] * 1.02
    manifest = get_manifest(profile.base.model)
    assert manifest.id in run.measured_on and f"({manifest.quantization})" in run.measured_on
    assert "llama.cpp" in run.measured_on
    assert served.adapters == serving  # the gate's adapters unloaded, the runtime's kept
    routed = runtime.route("Write a Python function that reverses a string.")
    assert routed.kind == "auto" and routed.label in profile.labels  # the runtime still serves


def test_the_apps_refine_is_given_the_runtimes_engine(tmp_path: Path) -> None:
    """The facade hands its runtime's engine to the refine job (one engine owns llama.cpp)."""
    from macaron_local.facade import Assistant

    app = Assistant("tall-local", db_path=tmp_path / "macaron.db")
    try:
        app.start()
        assert app.wait_ready(600) and app.ready
        handle = app.start_refine("L0")
        assert handle.job.engine is app._runtime.engine
        handle.join(600)  # nothing kept to learn from: it ends at once with that error
        assert "no experience" in (handle.progress().error or "")
    finally:
        app.close(finish_summaries=False)


def test_an_identical_candidate_measures_exactly_the_same_and_regresses_nothing(
    profile: Any, heldout: Split, served: Engine, current: Path, tmp_path: Path
) -> None:
    same = Path(shutil.copy(current, tmp_path / "same.gguf"))
    run = _gate(profile, heldout, same, current, engine=served)
    assert run.before == run.after  # same engine, same prompts, greedy: deterministic
    assert set(run.before["heldout"]) == {"nll", "pref_acc", "route_acc", "check"}
    assert set(run.before["regression"]) == {"route_acc", "answer_nll"}
    assert all(g == 0 for g in run.decision.gains.values())
    # nothing regressed; an unchanged adapter is refused only for not improving (min_gain)
    assert run.decision.reasons == ["no held-out metric improved by more than 0.0"]


def test_a_better_candidate_passes_on_an_engine_of_its_own(
    profile: Any, heldout: Split, current: Path
) -> None:
    """The base serving the label (no parent) against the shipped router adapter, judged by
    held-out routing; no engine given (``macaron refine run`` from the command line): the gate
    opens and closes its own."""
    run = _gate(profile, Split(routing=heldout.routing), current, None)
    assert run.decision.passed, run.decision.reasons
    assert run.after["heldout"]["route_acc"] > run.before["heldout"]["route_acc"]
    assert run.after["regression"]["route_acc"] > run.before["regression"]["route_acc"]


def test_a_cancel_stops_the_gate_and_unloads_its_adapters(
    profile: Any, heldout: Split, served: Engine, current: Path
) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        _gate(profile, heldout, current, current, engine=served, cancel=cancel)
    assert not any(n.startswith("refine-gate") for n in served.adapters)


def test_a_conversation_read_after_one_with_the_same_prompt_reuses_its_prefix(
    profile: Any, served: Engine
) -> None:
    """The gate's teacher-forced rows: the second conversation's system prompt is not read
    again, and the rows asked for come out with the same next tokens as a fresh read."""
    import numpy as np

    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.refine.data import encode_turns
    from macaron_local.refine.gate import regression_examples

    examples, _ = regression_examples(profile.router_label, profile, tool_descriptions(), CFG)
    tok = shared_tokenizer(served.info.path)
    a, b = (encode_turns(tok, ex, 768)[0] for ex in examples[:2])
    first = b.targets.index(True) - 1
    shared = next(i for i, (x, y) in enumerate(zip(a.tokens, b.tokens, strict=False)) if x != y)
    assert shared > 100  # the label's system prompt
    fresh = served.eval_logits(b.tokens, all_positions=True)
    served.eval_logits(a.tokens, all_positions=True, first=a.targets.index(True) - 1, slot="t")
    reused = served.eval_logits(b.tokens, all_positions=True, first=first, slot="t")
    assert reused.shape == (len(b.tokens) - first, fresh.shape[1])
    assert (reused.argmax(1) == fresh[first:].argmax(1)).all()
    assert served.slots()["t"] == (None, len(b.tokens))  # the slot now holds b, for the next
    twice = [
        served.eval_logits(b.tokens, all_positions=True, first=first, slot="t") for _ in range(2)
    ]
    assert np.array_equal(*twice)  # the same reads give the same rows: the gate is deterministic
