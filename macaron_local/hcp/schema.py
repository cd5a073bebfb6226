"""The HCP profile schema: pydantic models for one resolved harness contract.

Owns the shape of a profile (every section, its types, defaults and limits), the consistency
checks that need nothing but the profile itself (label sets, fallback, allowlist keys), and the
accessors the turn pipeline calls (``system_prompt``, ``router_prompt``, ``sampling_for``,
``content_hash``). It must not read files, look up model manifests or touch llama.cpp: that is
the loader's job (``loader.py`` / ``checks.py``).

Scalars are strict (a TOML string is never coerced into a number or a bool) so a typo in a type
is reported, not silently converted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    field_validator,
    model_validator,
)

from macaron_local.errors import ContractError

SCHEMA_VERSION: Final = 1
DEFAULT_LABELS = ("L0", "L1", "L2", "L3")
DEFAULT_GRAMMAR = 'root ::= "L0" | "L1" | "L2" | "L3"'
NAME_RE = r"^[a-z0-9][a-z0-9._-]{0,63}$"
LABEL_RE = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
REVISION_RE = r"^(none|bundled|[0-9a-f]{64})$"
DEFAULT_URL_ENV = "MACARON_REMOTE_URL"  # the remote's URL when the profile names none

Str = Annotated[str, Strict()]
Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
Float = Annotated[float, Strict()]  # strict floats still accept TOML integers
Label = Annotated[str, Strict(), Field(pattern=LABEL_RE)]


ROLE_NAMES = {"chat": "Chat", "agent": "Agent", "coding": "Coding", "genui": "GenUI"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ProfileMeta(_Frozen):
    """``[profile]``: who this contract is."""

    id: Annotated[str, Strict(), Field(pattern=NAME_RE)]
    version: Annotated[str, Strict(), Field(min_length=1, max_length=64)]
    description: Str = ""


class BaseRef(_Frozen):
    """``[base]``: the frozen base model, by manifest id (``macaron models list``)."""

    model: Annotated[str, Strict(), Field(min_length=1)]


class AdapterRef(_Frozen):
    """``[adapters.<label>]``: which LoRA revision serves a label.

    ``revision`` is ``"none"`` (base weights only), ``"bundled"`` (the base manifest's adapter
    for this label) or the 64-hex sha256 of an adapter revision in the lineage store.
    """

    revision: Annotated[str, Strict(), Field(pattern=REVISION_RE)]
    role: Annotated[str, Strict(), Field(min_length=1)]
    description: Str = ""


class Router(_Frozen):
    """``[router]``: the route hop run by L0 under a grammar."""

    labels: tuple[Label, ...] = DEFAULT_LABELS
    descriptions: dict[str, Str]
    system_prompt: Annotated[str, Strict(), Field(min_length=1)]
    grammar: Annotated[str, Strict(), Field(min_length=1)] = DEFAULT_GRAMMAR
    decode_budget: Annotated[int, Strict(), Field(ge=1, le=256)] = 24
    fallback: Str = "L0"


class Summary(_Frozen):
    """``[summary]``: the after-answer hop that writes the turn's summary."""

    max_tokens: Annotated[int, Strict(), Field(ge=16, le=2048)] = 192
    prompt: Annotated[str, Strict(), Field(min_length=1)]


class Memory(_Frozen):
    """``[memory]``: what each specialist's view holds and what happens when it overflows."""

    own_turns: Literal["verbatim", "summary"] = "verbatim"
    other_turns: Literal["summary", "omit"] = "summary"
    compaction: Literal["summarize-oldest", "drop-oldest"] = "summarize-oldest"
    keep_recent_turns: Annotated[int, Strict(), Field(ge=0, le=64)] = 2
    answer_reserve: Annotated[int, Strict(), Field(ge=0)] = 512
    # How long a turn waits for another turn's summary its view needs when it is written in the
    # background (a catch-up), in seconds; past that the view shows a provisional note (the
    # request and the answer's opening) and the real summary lands for later turns. None: always
    # wait. A committed turn's summary is written before the next answer and always waited for.
    summary_wait_s: Annotated[float, Field(ge=0)] | None = None
    # How long closing the runtime goes on writing summaries (this run's, then those earlier
    # runs left undone); the rest is left for the next start, as after a crash.
    close_wait_s: Annotated[float, Field(ge=0, le=3600)] = 30.0


class PromptSpec(_Frozen):
    """``[prompts.<label>]``: a specialist's system prompt and its skills."""

    system: Annotated[str, Strict(), Field(min_length=1)]
    skills: tuple[Str, ...] = ()


class Tools(_Frozen):
    """``[tools]``: how tool calls are written and which tools each label may see."""

    format: Literal["repl-fence"] = "repl-fence"
    allow: dict[str, tuple[Annotated[str, Strict(), Field(min_length=1)], ...]] = {}

    @field_validator("allow")
    @classmethod
    def _normalise(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        # order and duplicates of glob patterns carry no meaning: normalise for the hash
        return {label: tuple(sorted(set(pats))) for label, pats in value.items()}


class ReplLimits(_Frozen):
    """``[repl.limits]``: per-execution ceilings for model-written code."""

    cpu_seconds: Annotated[float, Strict(), Field(gt=0, le=3600)] = 10.0
    wall_seconds: Annotated[float, Strict(), Field(gt=0, le=3600)] = 30.0
    memory_mb: Annotated[int, Strict(), Field(ge=16, le=65536)] = 512
    output_chars: Annotated[int, Strict(), Field(ge=256, le=1_000_000)] = 8000


class Repl(_Frozen):
    """``[repl]``: what code written by L1 may touch."""

    filesystem: Literal["none", "workspace", "home"] = "workspace"
    network: Bool = False
    subprocess: Bool = False
    # absent (or "os"): the kernel sandbox (bubblewrap / sandbox-exec), and no REPL where it
    # cannot start; "in-process": the weaker audit-hook mode (security-relevant: an approval).
    # Absent by default so that profiles written before it keep their hashes.
    isolation: Literal["os", "in-process"] | None = None
    limits: ReplLimits = ReplLimits()


class SamplingParams(_Frozen):
    """Sampling settings; in an override, an absent field inherits the default."""

    temperature: Annotated[float, Strict(), Field(ge=0, le=5)] | None = None
    top_p: Annotated[float, Strict(), Field(gt=0, le=1)] | None = None
    top_k: Annotated[int, Strict(), Field(ge=0)] | None = None
    min_p: Annotated[float, Strict(), Field(ge=0, le=1)] | None = None
    repeat_penalty: Annotated[float, Strict(), Field(gt=0, le=5)] | None = None
    seed: Annotated[int, Strict(), Field(ge=0, lt=2**32)] | None = None
    max_tokens: Annotated[int, Strict(), Field(ge=1)] | None = None


class SamplingSection(_Frozen):
    """``[sampling]``: ``[sampling.defaults]`` plus ``[sampling.overrides.<label>]``."""

    defaults: SamplingParams = SamplingParams(
        temperature=0.2, top_p=0.9, top_k=40, min_p=0.05, repeat_penalty=1.1, max_tokens=512
    )
    overrides: dict[str, SamplingParams] = {}


class Resources(_Frozen):
    """``[resources]``: what llama.cpp gets on this machine."""

    n_ctx: Annotated[int, Strict(), Field(ge=256, le=1 << 20)] = 4096
    threads: Annotated[int, Strict(), Field(ge=0, le=1024)] = 0
    n_gpu_layers: Annotated[int, Strict(), Field(ge=-1)] = 0
    offload: Bool = False  # KQV offload: the KV cache and attention on the GPU with the layers
    # unset (None) keeps the engine's default; set values are in the hash like everything else
    kv_type: Literal["f16", "q8_0", "f32"] | None = None  # q8_0 halves KV memory (needs FA)
    flash_attn: Bool | None = None  # None: llama.cpp decides (auto)
    n_batch: Annotated[int, Strict(), Field(ge=32, le=1 << 16)] | None = None
    n_ubatch: Annotated[int, Strict(), Field(ge=32, le=1 << 16)] | None = None
    snapshot_mb: Annotated[int, Strict(), Field(ge=0, le=1 << 20)] | None = None  # parked KV
    # KV sequences kept resident (n_ctx cells each); unset: 1 on a CPU, a seat per live slot
    # when the KV is offloaded (see turns.pipeline.resident_slots)
    resident_slots: Annotated[int, Strict(), Field(ge=1, le=64)] | None = None

    @model_validator(mode="after")
    def _kv_needs_fa(self) -> Resources:
        if self.kv_type == "q8_0" and self.flash_attn is False:
            raise ValueError("kv_type q8_0 needs flash attention (flash_attn = false turns it off)")
        return self


class HeavyRules(_Frozen):
    """``[remote.heavy]``: which turns count as heavy and go to the remote server."""

    labels: tuple[Label, ...] = ()
    view_exceeds_local_ctx: Bool = True
    long_answer_tokens: Annotated[int, Strict(), Field(ge=1)] | None = None
    local_model_missing: Bool = True


class Remote(_Frozen):
    """``[remote]``: the optional Venti server (OpenAI-compatible) for heavy turns."""

    enabled: Bool = False
    endpoint: Annotated[str, Strict(), Field(pattern=r"^(https?://\S+)?$")] = ""
    endpoint_env: Annotated[str, Strict(), Field(pattern=r"^([A-Z_][A-Z0-9_]*)?$")] = ""
    served_model: Str = "Macaron-V1-Venti"
    heavy: HeavyRules = HeavyRules()
    connect_timeout_s: Annotated[float, Strict(), Field(gt=0, le=600)] = 5.0
    read_timeout_s: Annotated[float, Strict(), Field(gt=0, le=3600)] = 120.0
    # one answer as a whole: from the request to its end marker (a slow drip of pieces, each
    # inside read_timeout_s, is cut here), and the bytes it may take on the wire
    total_timeout_s: Annotated[float, Strict(), Field(gt=0, le=86400)] = 600.0
    max_response_bytes: Annotated[int, Strict(), Field(ge=4096, le=1 << 30)] = 8 << 20

    def resolved_endpoint(self, environ: Mapping[str, str], *, forced: bool = False) -> str | None:
        """The URL to call: the profile's ``endpoint``, else the ``endpoint_env`` variable, else
        ``$MACARON_REMOTE_URL`` (the one rule turns, ``doctor`` and the app use). ``enabled``
        governs automatic (heavy) routing; ``forced`` (the user's ``/remote``) is consent for
        that turn, so it may use the endpoint of a disabled profile."""
        if not (self.enabled or forced):
            return None
        named = environ.get(self.endpoint_env, "") if self.endpoint_env else ""
        return self.endpoint or named or environ.get(DEFAULT_URL_ENV) or None


class Experience(_Frozen):
    """``[experience]``: local, opt-in logging of turns for the refine loop."""

    opt_in: Bool = False
    retention_days: Annotated[int, Strict(), Field(ge=0, le=3650)] = 30
    # the promotion gate: a refined revision may lose at most this much on the regression
    # suite (absolute for accuracies, relative for NLL) and on held-out experience
    max_regression: Annotated[float, Field(ge=0, le=1)] = 0.02


class Profile(_Frozen):
    """One resolved, validated harness contract. Frozen: changing it means loading another."""

    schema_version: Literal[1] = SCHEMA_VERSION
    extends: Annotated[str, Strict(), Field(pattern=NAME_RE)] | None = None
    profile: ProfileMeta
    base: BaseRef
    adapters: dict[str, AdapterRef]
    router: Router
    summary: Summary
    memory: Memory = Memory()
    prompts: dict[str, PromptSpec]
    tools: Tools = Tools()
    repl: Repl = Repl()
    sampling: SamplingSection = SamplingSection()
    resources: Resources = Resources()
    remote: Remote = Remote()
    experience: Experience = Experience()

    _source: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        check_labels(self)
        return self

    def __eq__(self, other: object) -> bool:
        # equal content is equal profiles, wherever each was loaded from
        if not isinstance(other, Profile):
            return NotImplemented
        return self.content_hash == other.content_hash

    def __hash__(self) -> int:
        return hash(self.content_hash)

    @property
    def id(self) -> str:
        return self.profile.id

    @property
    def labels(self) -> tuple[str, ...]:
        return self.router.labels

    def label_for(self, role: str) -> str | None:
        """The label whose adapter has ``role`` (roles combine with ``+``: ``chat+router``);
        None when no adapter has it. Code asks for a role, never for a label literal."""
        return next((lb for lb, a in self.adapters.items() if role in a.role.split("+")), None)

    def roles_of(self, label: str) -> tuple[str, ...]:
        """``label``'s roles (``chat+router`` -> ``("chat", "router")``); none without adapter."""
        adapter = self.adapters.get(label)
        return tuple(adapter.role.split("+")) if adapter is not None else ()

    @property
    def router_label(self) -> str:
        """The label whose adapter runs the route hop (role ``router``, else the first label)."""
        return self.label_for("router") or self.labels[0]

    @property
    def agent_label(self) -> str:
        """The label that runs tools: role ``agent``, else the first label allowed tools,
        else the router's."""
        tooled = (lb for lb in self.labels if self.tools.allow.get(lb))
        return self.label_for("agent") or next(tooled, self.router_label)

    def display_name(self, label: str) -> str:
        """A label's name for people: its adapter's first role (``agent`` -> "Agent")."""
        adapter = self.adapters.get(label)
        if adapter is None:
            return label
        role = adapter.role.split("+")[0]
        return ROLE_NAMES.get(role, role.replace("-", " ").capitalize())

    @property
    def source(self) -> Path | None:
        """The file this profile was loaded from (None when built in memory)."""
        return self._source

    @cached_property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON of this profile (see ``canonical.py``)."""
        from macaron_local.hcp.canonical import content_hash

        return content_hash(self)

    @property
    def contract_hash(self) -> str:
        """The hash training records: the profile minus its adapter revision pointers."""
        from macaron_local.hcp.canonical import contract_hash

        return contract_hash(self)

    def contract_hash_for(self, label: str) -> str:
        """The contract ``label``'s adapter is trained against (what training records)."""
        from macaron_local.hcp.canonical import contract_hash

        return contract_hash(self, label)

    def system_prompt(self, label: str, tools: Mapping[str, str] | None = None) -> str:
        """The answer-hop system prompt of ``label``: its prompt, then its skills. Given a
        :class:`ToolCatalog`, ``{tools}`` lists each module's functions, not only the module."""
        spec = self._prompt(label)
        lines = tools.agent_lines() if isinstance(tools, ToolCatalog) else tools
        text = fill(spec.system, labels=self._label_lines(), tools=tool_lines(lines))
        if spec.skills:
            text += "\n\nSkills:\n" + "\n".join(f"- {skill}" for skill in spec.skills)
        return text

    def router_prompt(self, tools: Mapping[str, str] | None = None) -> str:
        """The route-hop system prompt with ``{labels}`` and ``{tools}`` filled in."""
        return fill(self.router.system_prompt, labels=self._label_lines(), tools=tool_lines(tools))

    def sampling_for(self, label: str) -> SamplingParams:
        """The defaults merged with ``label``'s override (override fields win when set)."""
        self._prompt(label)
        override = self.sampling.overrides.get(label)
        if override is None:
            return self.sampling.defaults
        update = override.model_dump(exclude_none=True)
        return self.sampling.defaults.model_copy(update=update)

    def tool_patterns(self, label: str) -> tuple[str, ...]:
        """Glob patterns of the tool names ``label`` may see (empty: no tools)."""
        self._prompt(label)
        return self.tools.allow.get(label, ())

    def _prompt(self, label: str) -> PromptSpec:
        if label not in self.prompts:
            raise ContractError(
                f"profile {self.id!r} has no label {label!r} (labels: {', '.join(self.labels)})",
                path=self._source,
                where="router.labels",
            )
        return self.prompts[label]

    def _label_lines(self) -> str:
        return "\n".join(f"{lb} = {self.router.descriptions[lb]}" for lb in self.labels)


class ToolCatalog(Mapping[str, str]):
    """The installed tools as prompts name them. As a mapping: ``module -> one line``, the short
    list the router's ``{tools}`` shows. :meth:`agent_lines` adds each module's functions with
    their parameters (``reminders.add(text, at), reminders.list()``): what an agent's ``{tools}``
    shows, so the model calls functions that exist (it guessed ``reminders.search`` from the
    module list). Serving and training build it with the same function
    (:func:`macaron_local.turns.tools.tool_descriptions`), so both render the same prompt."""

    def __init__(self, modules: Mapping[str, str], functions: Mapping[str, Collection[str]]):
        self._modules = dict(sorted(modules.items()))
        self._functions = {m: tuple(functions.get(m, ())) for m in self._modules}

    def __getitem__(self, module: str) -> str:
        return self._modules[module]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def functions(self, module: str) -> tuple[str, ...]:
        """The calls of ``module`` as the model writes them (``reminders.add(text, at)``)."""
        return self._functions.get(module, ())

    def agent_lines(self) -> dict[str, str]:
        """``"its calls" -> what the module does``, one line per module (a module without
        functions keeps its name)."""
        return {", ".join(self._functions[m]) or m: desc for m, desc in self._modules.items()}


def tool_lines(tools: Mapping[str, str] | None) -> str:
    """One ``name: description`` line per tool, or ``(none)``."""
    if not tools:
        return "(none)"
    return "\n".join(f"- {name}: {desc}" for name, desc in sorted(tools.items()))


def fill(template: str, *, labels: str, tools: str) -> str:
    """Replace the two placeholders; other braces (code samples) are left alone."""
    return template.replace("{labels}", labels).replace("{tools}", tools)


def check_labels(p: Profile) -> None:
    """The label sets of router, adapters, prompts and descriptions must agree."""
    labels = p.router.labels
    if not labels:
        raise ContractError("router.labels is empty", where="router.labels")
    dupes = sorted({lb for lb in labels if labels.count(lb) > 1})
    if dupes:
        raise ContractError(f"duplicate labels: {', '.join(dupes)}", where="router.labels")
    want = set(labels)
    named: tuple[tuple[str, Collection[str]], ...] = (
        ("adapters", p.adapters),
        ("prompts", p.prompts),
        ("router.descriptions", p.router.descriptions),
    )
    for section, keys in named:
        _same_labels(section, set(keys), want)
    optional: tuple[tuple[str, Collection[str]], ...] = (
        ("tools.allow", p.tools.allow),
        ("sampling.overrides", p.sampling.overrides),
        ("remote.heavy.labels", p.remote.heavy.labels),
    )
    for section, keys in optional:
        extra = sorted(set(keys) - want)
        if extra:
            raise ContractError(
                f"unknown label(s) {', '.join(extra)}; router.labels is {', '.join(labels)}",
                where=f"{section}.{extra[0]}" if section != "remote.heavy.labels" else section,
            )
    if p.router.fallback not in want:
        raise ContractError(
            f"fallback label {p.router.fallback!r} is not one of {', '.join(labels)}",
            where="router.fallback",
        )
    if p.remote.enabled and not (p.remote.endpoint or p.remote.endpoint_env):
        raise ContractError(
            "remote is enabled but neither endpoint nor endpoint_env is set", where="remote"
        )


def _same_labels(section: str, got: set[str], want: set[str]) -> None:
    missing, extra = sorted(want - got), sorted(got - want)
    if extra:
        raise ContractError(
            f"unknown label(s) {', '.join(extra)} (router.labels: {', '.join(sorted(want))})",
            where=f"{section}.{extra[0]}",
        )
    if missing:
        raise ContractError(
            f"label(s) {', '.join(missing)} from router.labels missing here", where=section
        )
