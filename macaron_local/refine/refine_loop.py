"""The local refine loop: learn a new adapter revision from experience, gated, in the background.

Owns :class:`RefineConfig`, the three objectives over the torch LoRA model (SFT on accepted and
corrected answers plus routing corrections and a replay slice; DPO on preference pairs against
the starting policy as reference; a GRPO-style update: a group of sampled answers per checkable
prompt, reward from its checker, group-normalised advantages, no ratio clipping because each
group is used for exactly one update), sampling with a KV cache, cancellation (an event) with
resumable trainer state in the cache, and the run:
start from the revision serving now -> train -> export the candidate GGUF -> the gate, on the
served engine (the revision serving now and the candidate, same engine, same prompts) ->
register -> promote or keep -> report. A cancelled run registers nothing; its trainer state
stays until the revision is registered, so a cancel during the gate loses no training. Must
not: promote without :func:`macaron_local.refine.gate.decide` passing, write trainer state
beside adapters, or open a second llama.cpp engine beside the one it is given.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from macaron_local import paths
from macaron_local.adapter_base import TrainingBase, training_base
from macaron_local.errors import CancelledError, RefineError
from macaron_local.refine.bootstrap import replay_slice
from macaron_local.refine.data import Encoded
from macaron_local.refine.gate import GateConfig, GateRun, plot_gate, plot_series
from macaron_local.refine.hf import HFBase
from macaron_local.refine.lora import LoraConfig, attach_lora, detach_lora, export_lora, import_lora
from macaron_local.refine.train import (
    collate,
    encode_all,
    sft_loss,
    shared_prefix,
)
from macaron_local.refine.trainer import load_state, lr_at, save_state, set_lr, state_dir

if TYPE_CHECKING:
    from macaron_local.engine import Engine


class RefineConfig(BaseModel):
    """Everything that decides a refine run (recorded with the revision).

    The defaults are what ``bench/learn.py`` measured (session 4): 30 steps at lr 1e-3, one replay
    row per experience row, DPO at half weight and KL to the starting revision at weight 2 took
    held-out paraphrases of a user's facts from 0% to 85% with routing -1.5 points and answer NLL
    -0.5% on the regression suite, and the gate promoted it. Without the KL term the same gain
    cost 7.6% answer NLL and the gate refused it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: Annotated[int, Field(ge=1)] = 30
    batch_size: Annotated[int, Field(ge=1)] = 8
    lr: Annotated[float, Field(gt=0)] = 1e-3
    warmup_steps: Annotated[int, Field(ge=0)] = 3
    rank: Annotated[int, Field(ge=1)] = 16  # for a fresh LoRA when the base serves the label
    alpha: Annotated[float, Field(gt=0)] = 32.0
    max_len: Annotated[int, Field(ge=16)] = 768
    replay_ratio: Annotated[float, Field(ge=0)] = 1.0  # replay examples per experience example
    # Batches draw replay from at least this many of the label's training rows: a replay slice
    # the size of a 30-turn experience log (~25 rows) kept those rows and forgot the rest.
    replay_pool: Annotated[int, Field(ge=0)] = 512
    # KL(starting revision || new) on the replay rows' answer tokens: the new revision keeps the
    # old one's whole distribution on its own data, not just the data's one-hot answers.
    kl_weight: Annotated[float, Field(ge=0)] = 2.0
    dpo_beta: Annotated[float, Field(gt=0)] = 0.1
    dpo_weight: Annotated[float, Field(ge=0)] = 0.5
    dpo_batch: Annotated[int, Field(ge=1)] = 4
    grpo_every: Annotated[int, Field(ge=0)] = 5  # a GRPO group every N steps (0: never)
    grpo_group: Annotated[int, Field(ge=2)] = 4
    grpo_max_tokens: Annotated[int, Field(ge=1)] = 32
    grpo_temperature: Annotated[float, Field(gt=0)] = 1.0
    heldout_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.2
    seed: int = 0
    bf16: bool = True
    threads: Annotated[int, Field(ge=1)] = 1
    gate: GateConfig = GateConfig()


@dataclass
class RefineReport:
    run_id: str
    label: str
    status: str  # promoted | kept | cancelled
    summary: str = ""
    parent: str | None = None
    revision: str | None = None
    counts: dict[str, Any] = field(default_factory=dict)
    before: dict[str, dict[str, float]] = field(default_factory=dict)
    after: dict[str, dict[str, float]] = field(default_factory=dict)
    gate_passed: bool = False
    reasons: list[str] = field(default_factory=list)
    measured_on: str = ""  # the served engine the gate measured on (base, quantization)
    gate_s: float = 0.0
    sft_loss: list[float] = field(default_factory=list)
    dpo_loss: list[float] = field(default_factory=list)
    kl_loss: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)
    steps: int = 0
    wall_s: float = 0.0
    report_json: str = ""
    plots: list[str] = field(default_factory=list)


# --- model helpers ----------------------------------------------------------------------------


def seq_logprobs(
    model: Any, items: Sequence[Encoded], *, mean: bool = False, bf16: bool = True
) -> torch.Tensor:
    """Summed (or mean) log-probability of each item's target tokens, shape (B,)."""
    tokens, targets = collate(items)
    p = shared_prefix(items)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        hidden = model.hidden(tokens[:, p:], prefix=tokens[0, :p] if p else None)
        sel = targets[:, p + 1 :]
        logits = model.logits(hidden[:, :-1][sel])
    lp = F.log_softmax(logits.float(), -1).gather(-1, tokens[:, p + 1 :][sel][:, None])[:, 0]
    rows = torch.arange(len(items))[:, None].expand_as(sel)[sel]
    out = torch.zeros(len(items)).index_add(0, rows, lp)
    return out / sel.sum(1).clamp(min=1) if mean else out


def pair_examples(
    tok: Any, pairs: Sequence[Mapping[str, Any]], max_len: int = 768
) -> tuple[list[Encoded], list[Encoded]]:
    def enc(p: Mapping[str, Any], key: str) -> Encoded:
        return encode_all(
            tok, [{"messages": [*p["prompt"], {"role": "assistant", "content": p[key]}]}], max_len
        )[0]

    return [enc(p, "chosen") for p in pairs], [enc(p, "rejected") for p in pairs]


def dpo_loss(
    pc: torch.Tensor, pr: torch.Tensor, rc: torch.Tensor, rr: torch.Tensor, beta: float
) -> torch.Tensor:
    """-log sigmoid(beta * ((pi_c - ref_c) - (pi_r - ref_r))), mean over pairs."""
    return -F.logsigmoid(beta * ((pc - rc) - (pr - rr))).mean()


@torch.no_grad()
def sample_tokens(
    model: Any,
    prompt: list[int],
    *,
    n: int,
    max_tokens: int,
    temperature: float,
    eog: Callable[[int], bool],
    gen: torch.Generator | None = None,
) -> list[list[int]]:
    """``n`` continuations of ``prompt`` (greedy when ``temperature`` <= 0), KV-cached."""
    hf = isinstance(model, HFBase)  # transformers keeps its own KV cache
    logits, state = model.decode_start(prompt, n) if hf else _gguf_start(model, prompt, n)
    out: list[list[int]] = [[] for _ in range(n)]
    done = [False] * n
    for _ in range(max_tokens):
        if temperature <= 0:
            nxt = logits.argmax(-1)
        else:
            probs = F.softmax(logits.float() / temperature, -1)
            nxt = torch.multinomial(probs, 1, generator=gen)[:, 0]
        for i, t in enumerate(nxt.tolist()):
            if not done[i]:
                out[i].append(t)
                done[i] = eog(t)
        if all(done):
            break
        logits, state = model.decode_next(nxt, state) if hf else _gguf_next(model, nxt, state)
    return out


def _gguf_start(model: Any, prompt: list[int], n: int) -> tuple[torch.Tensor, Any]:
    x, past = model._layers(torch.tensor([prompt]), None)
    return model.logits(model.output_norm(x[:, -1])).expand(n, -1), past


def _gguf_next(model: Any, nxt: torch.Tensor, past: Any) -> tuple[torch.Tensor, Any]:
    n = nxt.shape[0]
    x, own = model._layers(nxt[:, None], past)
    past = [
        (torch.cat((pk.expand(n, -1, -1, -1), k), 2), torch.cat((pv.expand(n, -1, -1, -1), v), 2))
        for (pk, pv), (k, v) in zip(past, own, strict=True)
    ]
    return model.logits(model.output_norm(x[:, -1])), past


def prompt_ids(tok: Any, messages: Sequence[Mapping[str, str]]) -> list[int]:
    return tok.tokenize(tok.render_chat(messages, add_generation_prompt=True))


def grpo_loss(
    model: Any, tok: Any, item: Mapping[str, Any], cfg: RefineConfig, gen: torch.Generator
) -> tuple[torch.Tensor | None, float]:
    """One group for one checkable prompt: (loss or None when all rewards tie, mean reward)."""
    from macaron_local.experience.checkers import check

    ids = prompt_ids(tok, item["prompt"])
    samples = [
        s
        for s in sample_tokens(
            model,
            ids,
            n=cfg.grpo_group,
            max_tokens=cfg.grpo_max_tokens,
            temperature=cfg.grpo_temperature,
            eog=tok.is_eog,
            gen=gen,
        )
        if s
    ]
    texts = [tok.detokenize([t for t in s if not tok.is_eog(t)]) for s in samples]
    rewards = torch.tensor([float(check(item["checker"], t)) for t in texts])
    if len(samples) < 2 or float(rewards.std()) == 0.0:
        return None, float(rewards.mean()) if len(rewards) else 0.0
    adv = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    items = [
        Encoded(tokens=ids + s, targets=[False] * len(ids) + [True] * len(s), group="g")
        for s in samples
    ]
    lp = seq_logprobs(model, items, mean=True, bf16=cfg.bf16)
    return -(adv * lp).mean(), float(rewards.mean())


# --- the run ----------------------------------------------------------------------------------


def runs_dir() -> Path:
    return paths.data_dir() / "refine" / "runs"


def _resume_path(run_id: str) -> Path:
    return state_dir(run_id) / "resume.pt"


def _parent(profile: Any, label: str) -> tuple[str | None, Path | None]:
    """(revision, GGUF path) serving ``label`` now; (None, None) when the base serves it."""
    from macaron_local.manifests import get_manifest
    from macaron_local.turns.adapters import resolve

    b = resolve(profile, get_manifest(profile.base.model))[label]
    return (b.revision, b.path) if b.path is not None else (None, None)


@dataclass
class _State:
    """What the run carries from step to step (and what a resume restores)."""

    step: int = 0
    sft: list[float] = field(default_factory=list)
    dpo: list[float] = field(default_factory=list)
    kl: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)


def run_refine(
    label: str,
    *,
    profile: Any,
    db: Any,
    config: RefineConfig | None = None,
    cancel: threading.Event | None = None,
    promote: bool = True,
    echo: Callable[[str], None] = print,
    base: Path | None = None,
    on_step: Callable[[int, int], None] | None = None,
    engine: Engine | None = None,
) -> RefineReport:
    """Train a new revision of ``label`` from the experience in ``db``; see the module doc.

    ``base`` overrides the training file only: the gate measures on the profile's served base,
    on ``engine`` when given (the app's runtime: one engine owns llama.cpp), else on one it
    opens for the gate and closes after."""
    from macaron_local.engine.lora_io import BASE_SHA_KEY, LABEL_KEY, REVISION_KEY
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.experience import datasets, log
    from macaron_local.manifests import get_manifest
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.gate import run_gate, served_name
    from macaron_local.turns.tools import tool_descriptions

    if cancel is not None and cancel.is_set():  # before any work: a background run is slow to
        return RefineReport(  # get the CPU, and nothing of it has started yet
            f"{label}-not-started",
            label,
            "cancelled",
            "cancelled before it started; nothing was registered",
        )
    cfg = config or RefineConfig()
    gate = cfg.gate.model_copy(update={"max_regression": profile.experience.max_regression})
    cfg = cfg.model_copy(update={"gate": gate})  # the profile's threshold
    started = time.perf_counter()
    tools = tool_descriptions()
    data = datasets.build(
        log.rows(db),
        label=label,
        profile=profile,
        tools=tools,
        heldout_fraction=cfg.heldout_fraction,
    )
    n_exp = len(data.train.sft) + len(data.train.routing)
    if data.train.size == 0:
        raise RefineError(
            f"no experience to learn {label} from yet",
            hint="opt in (macaron experience on), then correct or rate answers",
        )
    n_replay = max(cfg.replay_pool, math.ceil(cfg.replay_ratio * n_exp)) if cfg.replay_ratio else 0
    data.replay = replay_slice(label, profile, tools, n_replay, seed=cfg.seed)
    parent, parent_path = _parent(profile, label)
    key = json.dumps(
        [
            label,
            cfg.model_dump(mode="json"),
            parent,
            profile.content_hash,
            data.train.__dict__,
            data.heldout.__dict__,
            data.replay,
        ],
        sort_keys=True,
        default=str,
    )
    run_id = f"{label}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    run_dir = paths.ensure(runs_dir() / run_id)

    def stop_if() -> bool:
        return cancel is not None and cancel.is_set()

    rep = RefineReport(run_id, label, "running", parent=parent, counts=data.counts())
    torch.set_num_threads(cfg.threads)
    tb = training_base(profile, base)  # the profile's base, unless a file is named
    base = tb.path
    try:  # a cancel reaches every tensor read and every forward pass, not only step ends
        model = load_base(base, stop_if=stop_if, weights=tb.training_weights(progress=False))
    except CancelledError:
        return _cancelled(rep, _State(), cfg, run_dir, started)
    tok, st = shared_tokenizer(base), _State()
    if parent_path is not None:
        import_lora(model, parent_path)
    else:
        attach_lora(model, LoraConfig(rank=cfg.rank, alpha=cfg.alpha), seed=cfg.seed)
    cand = paths.ensure(paths.cache_dir() / "refine" / run_id) / "candidate.gguf"
    try:
        with _stops(model, stop_if):
            echo(f"{label}: {data.counts()} (parent {parent[:12] if parent else 'base'})")
            st = _train(model, tok, data, profile, tools, cfg, run_id, stop_if, echo, on_step)
        if st.step < cfg.steps:
            return _cancelled(rep, st, cfg, run_dir, started)
        meta = {BASE_SHA_KEY: tb.sha256, LABEL_KEY: label, REVISION_KEY: run_id}
        export_lora(model, cand, metadata=meta, dtype="f16")
    except CancelledError:
        return _cancelled(rep, st, cfg, run_dir, started)
    finally:
        model.eval()
        detach_lora(model)
    del model  # the gate runs on llama.cpp: the torch weights are not needed any more
    try:
        echo(f"  gate on the served engine: {served_name(get_manifest(profile.base.model))}")
        measured = run_gate(
            cand,
            parent=parent_path,
            label=label,
            profile=profile,
            heldout=data.heldout,
            cfg=cfg.gate,
            tools=tools,
            engine=engine,
            cancel=cancel,
        )
        sides = json.dumps([measured.before, measured.after])
        echo(f"  gate metrics ({measured.seconds} s): {sides}")
        _record(rep, st)
        _register(rep, cand, measured, label, parent, profile, cfg, run_id, tb, promote)
        _resume_path(run_id).unlink(missing_ok=True)
        return _write(rep, run_dir, started)
    except CancelledError:
        return _cancelled(rep, st, cfg, run_dir, started)
    finally:
        cand.unlink(missing_ok=True)


def _record(rep: RefineReport, st: _State) -> None:
    rep.steps, rep.sft_loss, rep.dpo_loss, rep.reward = st.step, st.sft, st.dpo, st.reward
    rep.kl_loss = st.kl


def _cancelled(
    rep: RefineReport, st: _State, cfg: RefineConfig, run_dir: Path, started: float
) -> RefineReport:
    """The report of a run stopped by the user: nothing registered, trainer state kept."""
    _record(rep, st)
    rep.status = "cancelled"
    rep.summary = (
        f"cancelled at step {st.step}/{cfg.steps}; nothing was registered (run it again to resume)"
    )
    return _write(rep, run_dir, started)


@contextmanager
def _stops(model: Any, stop_if: Callable[[], bool]) -> Iterator[None]:
    """Every forward pass of ``model`` (training, measuring, sampling) starts by checking
    ``stop_if`` and raises :class:`CancelledError` once it is true: a cancel arriving during a
    long measurement ends it at the next token, however loaded the machine is."""

    def check(_module: Any, _args: Any) -> None:
        if stop_if():
            raise CancelledError("refine run cancelled")

    embeddings = [m for m in model.modules() if isinstance(m, torch.nn.Embedding)]
    handles = [m.register_forward_pre_hook(check) for m in embeddings]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _train(
    model: Any,
    tok: Any,
    data: Any,
    profile: Any,
    tools: Mapping[str, str],
    cfg: RefineConfig,
    run_id: str,
    stop_if: Callable[[], bool],
    echo: Callable[[str], None],
    on_step: Callable[[int, int], None] | None,
) -> _State:
    from macaron_local.refine.data import route_examples

    exp = (
        encode_all(
            tok, data.train.sft + route_examples(data.train.routing, profile, tools), cfg.max_len
        )
        if (data.train.sft or data.train.routing)
        else []
    )
    replay = encode_all(tok, data.replay, cfg.max_len) if data.replay else []
    chosen, rejected = pair_examples(tok, data.train.pairs, cfg.max_len)
    with torch.no_grad():  # the starting policy is the DPO reference
        ref_c = seq_logprobs(model, chosen) if chosen else None
        ref_r = seq_logprobs(model, rejected) if rejected else None
    params = [p for p in model.parameters() if p.requires_grad]
    parent = [p.detach().clone() for p in params] if cfg.kl_weight and replay else None
    opt = torch.optim.AdamW(params, lr=cfg.lr)
    st, resume = _State(), _resume_path(run_id)
    if resume.is_file():
        st = _State(**load_state(resume, model, opt))
        echo(f"  resuming {run_id} at step {st.step}")
    rng, gen = random.Random(cfg.seed + st.step), torch.Generator().manual_seed(cfg.seed + st.step)
    n_exp = max(1, round(cfg.batch_size / (1 + cfg.replay_ratio))) if replay else cfg.batch_size
    model.train()
    kept = st
    try:
        while st.step < cfg.steps:
            if stop_if():
                break
            kept = replace(st, sft=[*st.sft], dpo=[*st.dpo], kl=[*st.kl], reward=[*st.reward])
            set_lr(opt, lr_at(st.step, peak=cfg.lr, warmup=cfg.warmup_steps, total=cfg.steps))
            loss = torch.zeros(())
            if exp:
                again = (
                    [rng.choice(replay) for _ in range(cfg.batch_size - n_exp)] if replay else []
                )
                rows = [rng.choice(exp) for _ in range(n_exp)]
                part, _ = sft_loss(model, rows, cfg.bf16)
                if again:  # one forward serves the replay rows' cross-entropy and their KL anchor
                    anchor = (params, parent) if parent is not None else None
                    ce, kl = sft_loss(model, again, cfg.bf16, anchor)
                    n_e, n_r = (sum(e.n_targets for e in b) for b in (rows, again))
                    part = (n_e * part + n_r * ce) / (n_e + n_r)
                    if kl is not None:
                        loss, st.kl = loss + cfg.kl_weight * kl, [*st.kl, round(kl.item(), 5)]
                loss, st.sft = loss + part, [*st.sft, round(part.item(), 5)]
            if chosen and cfg.dpo_weight > 0:
                idx = [rng.randrange(len(chosen)) for _ in range(min(cfg.dpo_batch, len(chosen)))]
                pc = seq_logprobs(model, [chosen[i] for i in idx], bf16=cfg.bf16)
                pr = seq_logprobs(model, [rejected[i] for i in idx], bf16=cfg.bf16)
                part = dpo_loss(pc, pr, ref_c[idx], ref_r[idx], cfg.dpo_beta)  # type: ignore[index]
                loss, st.dpo = loss + cfg.dpo_weight * part, [*st.dpo, round(part.item(), 5)]
            if data.train.checkable and cfg.grpo_every and st.step % cfg.grpo_every == 0:
                item = data.train.checkable[(st.step // cfg.grpo_every) % len(data.train.checkable)]
                rl_part, reward = grpo_loss(model, tok, item, cfg, gen)
                st.reward.append(round(reward, 4))
                if rl_part is not None:
                    loss = loss + rl_part
            if loss.requires_grad:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
            st.step += 1
            if on_step:
                on_step(st.step, cfg.steps)
            if st.step % 5 == 0 or st.step == cfg.steps:
                echo(
                    f"  step {st.step}/{cfg.steps} sft {st.sft[-1] if st.sft else '-'} "
                    f"dpo {st.dpo[-1] if st.dpo else '-'} kl {st.kl[-1] if st.kl else '-'} "
                    f"reward {st.reward[-1:] or '-'}"
                )
    except CancelledError:  # mid-step (see _stops): that step is dropped, the rest kept
        opt.zero_grad(set_to_none=True)
        st = kept
    save_state(resume, model, opt, asdict(st))  # removed once the revision is registered
    return st


def _register(
    rep: RefineReport,
    cand: Path,
    gate: GateRun,
    label: str,
    parent: str | None,
    profile: Any,
    cfg: RefineConfig,
    run_id: str,
    base: TrainingBase,
    promote: bool,
) -> None:
    from macaron_local import lineage

    decision = gate.decision
    rep.before, rep.after = gate.before, gate.after
    rep.gate_passed, rep.reasons = decision.passed, decision.reasons
    rep.measured_on, rep.gate_s = gate.measured_on, gate.seconds
    rev = lineage.register_revision(
        cand,
        label=label,
        parent=parent,
        base_sha256=base.sha256,
        profile_hash=profile.content_hash,
        data_hash=run_id,
        config=cfg.model_dump(mode="json"),
        metrics={
            "before": rep.before,
            "after": rep.after,
            "gate_passed": decision.passed,
            "gate_reasons": decision.reasons,
            "measured_on": gate.measured_on,
            "run_id": run_id,
        },
    )
    rep.revision = rev.revision
    if decision.passed and promote:
        lineage.promote(profile.id, label, rev.revision, base=base)
        rep.status = "promoted"
        rep.summary = f"{label} -> {rev.revision[:12]} (gate passed on {gate.measured_on})"
    else:
        why = "; ".join(decision.reasons) or "promotion not requested"
        rep.status = "kept"
        rep.summary = f"{rev.revision[:12]} kept unpromoted: {why} (on {gate.measured_on})"


def _write(rep: RefineReport, run_dir: Path, started: float) -> RefineReport:
    rep.wall_s = round(time.perf_counter() - started, 1)
    title = f"{rep.label} {rep.run_id} ({rep.status})"
    if rep.status == "cancelled" and not rep.steps:  # nothing to plot: say so at once
        rep.plots = []
    else:
        rep.plots = _plots(rep, run_dir, title)
    rep.report_json = str(run_dir / "report.json")
    tmp = run_dir / f".report.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(asdict(rep), indent=1))
    tmp.replace(run_dir / "report.json")
    return rep


def _plots(rep: RefineReport, run_dir: Path, title: str) -> list[str]:
    plots = [
        str(
            plot_series(
                run_dir / "loss.png",
                {"SFT": rep.sft_loss, "DPO": rep.dpo_loss, "KL to parent": rep.kl_loss},
                title=title,
                ylabel="loss",
            )
        ),
        str(
            plot_series(
                run_dir / "reward.png",
                {"GRPO mean reward": rep.reward},
                title=title,
                ylabel="reward",
            )
        ),
    ]
    if rep.before and rep.after:
        plots.append(str(plot_gate(run_dir / "gate.png", rep.before, rep.after, title=title)))
    return plots


class RefineJob:
    """A refine run on a background thread at the lowest CPU priority, cancellable.

    The app starts one and polls ``progress``; ``cancel()`` stops it between steps (trainer
    state is kept for a resume, no revision is registered). ``engine``: the app's, for the
    gate (None: the gate opens its own)."""

    def __init__(
        self,
        label: str,
        *,
        profile: Any,
        db_path: Path,
        config: RefineConfig | None = None,
        promote: bool = True,
        engine: Engine | None = None,
    ) -> None:
        self.label, self.profile, self.db_path = label, profile, db_path
        self.config, self.promote, self.engine = config, promote, engine
        self.progress: tuple[int, int] = (0, (config or RefineConfig()).steps)
        self.lines: list[str] = []
        self.report: RefineReport | None = None
        self.error: BaseException | None = None
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="refine")

    def start(self) -> RefineJob:
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> RefineReport | None:
        self._thread.join(timeout)
        return self.report

    def _run(self) -> None:
        from macaron_local.store import open_db

        try:  # Linux niceness is per thread: only this one yields
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        try:
            self.report = run_refine(
                self.label,
                profile=self.profile,
                db=open_db(self.db_path),
                config=self.config,
                cancel=self._cancel,
                promote=self.promote,
                echo=self.lines.append,
                on_step=lambda s, t: setattr(self, "progress", (s, t)),
                engine=self.engine,
            )
        except BaseException as exc:  # handed to the UI through .error
            self.error = exc
