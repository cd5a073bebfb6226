"""What the turn pipeline needs from GenUI: which label draws UIs, which tools a UI's actions may
call, and the answer grammar, built and validated once per (catalogue, tools).

The profile marks the GenUI specialist with ``role = "genui"`` on its ``[adapters.<label>]``
and the agent with ``role = "agent"``; a UI's ``tool:`` actions run through the agent's gate, so
the tools they may name are the registered tools the agent's allowlist admits. Owns
:class:`GrammarCache`. It must not decide what to do when a grammar cannot be built (the
pipeline falls back to unconstrained decoding and says so) nor run tools (``host.py`` does).
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from macaron_local.errors import GrammarError
from macaron_local.genui.catalogue import Catalogue
from macaron_local.genui.grammar import catalogue_gbnf

if TYPE_CHECKING:
    from macaron_local.agent.tools import ToolRegistry
    from macaron_local.hcp.schema import Profile

GENUI_ROLE = "genui"

GbnfFn = Callable[[Catalogue, Sequence[str]], str]
CacheKey = tuple[tuple[tuple[str, type], ...], tuple[str, ...]]


def genui_label(profile: Profile) -> str | None:
    """The label whose adapter has ``role = "genui"`` (None: this profile draws no UIs)."""
    return profile.label_for(GENUI_ROLE)


def agent_label(profile: Profile) -> str:
    """The label whose tool gate runs a UI's ``tool:`` actions: ``role = "agent"``, else the
    first label the profile lets call tools, else the router's."""
    return profile.agent_label


def action_tools(profile: Profile, registry: ToolRegistry) -> tuple[str, ...]:
    """The registered tools the agent's allowlist admits: what ``tool:`` actions may name."""
    patterns = profile.tool_patterns(agent_label(profile)) if profile.adapters else ()
    return tuple(
        sorted(n for n in registry.tools if any(fnmatch.fnmatchcase(n, p) for p in patterns))
    )


def _key(catalogue: Catalogue, tools: Sequence[str]) -> CacheKey:
    return tuple(sorted(catalogue.models.items())), tuple(sorted(set(tools)))


class GrammarCache:
    """GenUI answer grammars, each built and validated by llama.cpp once per (catalogue, tools).

    A grammar that cannot be built is remembered too: every later turn gets the same
    :class:`GrammarError` at once instead of paying for the build again. Thread-safe.
    """

    def __init__(self, gbnf: GbnfFn | None = None) -> None:
        self._gbnf = gbnf or (lambda cat, tools: catalogue_gbnf(cat, tools=tools))
        self._built: dict[CacheKey, str | GrammarError] = {}
        self._lock = threading.Lock()
        self.builds = 0  # how many grammars were built (not served from the cache)

    def get(
        self,
        catalogue: Catalogue,
        tools: Sequence[str],
        *,
        check: Callable[[str], None] | None = None,
    ) -> str:
        """The validated grammar; raises :class:`GrammarError` when it cannot be built.
        ``check`` validates with the serving engine (``Engine.check_grammar``, under its lock);
        without one, with the shared tokenizer."""
        key = _key(catalogue, tools)
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(catalogue, key[1], check)
            found = self._built[key]
        if isinstance(found, GrammarError):
            raise found
        return found

    def _build(
        self, catalogue: Catalogue, tools: Sequence[str], check: Callable[[str], None] | None
    ) -> str | GrammarError:
        from macaron_local.engine.grammar import validate_gbnf

        self.builds += 1
        try:
            text = self._gbnf(catalogue, tools)
            (check or validate_gbnf)(text)
        except GrammarError as exc:
            return exc
        except (TypeError, ValueError) as exc:  # a component the grammar builder cannot express
            return GrammarError(f"the ui grammar could not be built: {exc}")
        return text


__all__ = ["GrammarCache", "action_tools", "agent_label", "genui_label"]
