"""GenUI (L3): the component catalogue, its grammar, the streaming parser, actions and export.

The terminal widgets live in ``tui/widgets/genui.py``; nothing here imports textual. See
docs/genui.md for the format (docs/formats.md "L3 UI document, v0" plus the extensions).
"""

from __future__ import annotations

from macaron_local.genui.actions import (
    Action,
    ActionHost,
    ActionVisibility,
    Execution,
    Origin,
    Outcome,
    UiState,
    execute,
    make_action,
    tool_kwargs,
    turn_text,
    visible_values,
)
from macaron_local.genui.catalogue import Catalogue, Component, Document, default_catalogue
from macaron_local.genui.extend import component_model, plugin_catalogue, with_plugins
from macaron_local.genui.grammar import catalogue_gbnf, ui_grammar
from macaron_local.genui.html import to_html
from macaron_local.genui.stream import (
    Answer,
    ComponentReady,
    DocumentReady,
    Invalid,
    Prose,
    Title,
    UiStream,
    split_answer,
)

__all__ = [
    "Action",
    "ActionHost",
    "ActionVisibility",
    "Answer",
    "Catalogue",
    "Component",
    "ComponentReady",
    "Document",
    "DocumentReady",
    "Execution",
    "Invalid",
    "Origin",
    "Outcome",
    "Prose",
    "Title",
    "UiState",
    "UiStream",
    "catalogue_gbnf",
    "component_model",
    "default_catalogue",
    "execute",
    "make_action",
    "plugin_catalogue",
    "split_answer",
    "to_html",
    "tool_kwargs",
    "turn_text",
    "ui_grammar",
    "visible_values",
    "with_plugins",
]
