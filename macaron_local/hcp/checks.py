"""Checks of a validated profile against the world outside it.

Owns: the base model must have a manifest, ``bundled`` adapters must exist in that manifest,
adapter revision hashes must be known (when the caller knows them), and the route grammar must
be GBNF that llama.cpp accepts and that can produce every label. Must not mutate the profile or
load model weights (grammar validation loads the vocabulary only, through the engine module).
"""

from __future__ import annotations

import re
from functools import lru_cache

from macaron_local.errors import ContractError, GrammarError, MacaronError, ModelError
from macaron_local.hcp.schema import Profile
from macaron_local.manifests import ModelManifest, manifest_problems, manifests

UNPUBLISHED = "unpublished"
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def check_references(profile: Profile, *, known_revisions: set[str] | None = None) -> None:
    """Raise ContractError (with ``where``) for the first reference that does not resolve."""
    manifest = _base_manifest(profile)
    for label, ref in profile.adapters.items():
        where = f"adapters.{label}.revision"
        if ref.revision == "bundled" and manifest.adapter(label) is None:
            raise ContractError(
                f"revision 'bundled' but the manifest of {manifest.id!r} has no adapter "
                f"for label {label}",
                where=where,
                hint="use revision 'none' or a trained adapter revision",
            )
        if ref.revision not in ("none", "bundled") and known_revisions is not None:
            if ref.revision not in known_revisions:
                raise ContractError(
                    f"unknown adapter revision {ref.revision[:16]}… for label {label}",
                    where=where,
                    hint="run `macaron refine revisions` to list the known revisions",
                )
    check_grammar(profile)


def _base_manifest(profile: Profile) -> ModelManifest:
    try:
        known = manifests()
    except MacaronError as exc:
        raise ContractError(f"cannot read the model manifests: {exc}", where="base.model") from exc
    manifest = known.get(profile.base.model)
    if manifest is None:
        broken = manifest_problems()  # it may be the one that cannot be read: name it
        raise ContractError(
            f"unknown base model {profile.base.model!r} (known: {', '.join(sorted(known))})"
            + (f"; unreadable manifests: {'; '.join(str(p) for p in broken)}" if broken else ""),
            where="base.model",
            hint=broken[0].hint if broken else None,
        )
    return manifest


def require_published_base(profile: Profile) -> ModelManifest:
    """The base manifest, refusing one whose weights are not published yet (sha256 unpublished).

    Loading a profile that names such a base is fine (it documents a target); serving it is not.
    """
    manifest = _base_manifest(profile)
    if manifest.sha256 == UNPUBLISHED:
        raise ContractError(
            f"the base model {manifest.id!r} is not published yet: its manifest has no sha256, "
            "so its weights cannot be downloaded or verified",
            path=profile.source,
            where="base.model",
            hint="use the tall-local profile, or update the manifest when the weights are out",
        )
    return manifest


def check_grammar(profile: Profile) -> None:
    """The route grammar must parse in llama.cpp and be able to emit each label."""
    grammar = profile.router.grammar
    literals = {_unescape(m) for m in _LITERAL.findall(grammar)}
    missing = [lb for lb in profile.labels if lb not in literals]
    if missing:
        raise ContractError(
            f"the route grammar cannot produce label(s) {', '.join(missing)}",
            where="router.grammar",
        )
    try:
        problem = _gbnf_problem(grammar)
    except ModelError as exc:  # the culprit is the model file, not the profile's grammar
        raise ContractError(
            f"cannot check the route grammar: the model file whose vocabulary it is checked "
            f"against is unusable: {exc.message}",
            path=exc.path,
            hint=exc.hint or "run `macaron models verify`",
        ) from exc
    except (MacaronError, ImportError) as exc:  # no llama.cpp or no vocabulary to check against
        raise ContractError(
            f"cannot check the route grammar: {exc}", where="router.grammar"
        ) from exc
    if problem is not None:
        raise ContractError(f"invalid route grammar: {problem}", where="router.grammar")


@lru_cache(maxsize=128)
def _gbnf_problem(grammar: str) -> str | None:
    # validation is a pure function of the text (the vocabulary is fixed): cache it
    from macaron_local.engine.grammar import validate_gbnf

    try:
        validate_gbnf(grammar)
    except GrammarError as exc:
        return exc.message
    return None


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
