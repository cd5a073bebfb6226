"""The SQLite store: sessions, turns (a tree per session), summaries, tool calls, search.

Owns: everything persistent about conversations, behind this facade. Must not: resolve the
default database path (the entry point passes ``paths.db_path()`` to ``open_db``), open anything
at import time, or import the engine or the UI. Every function takes the database as its first
argument; one connection per thread (see ``store.db``). docs/store.md has the schema and rules.
"""

from __future__ import annotations

from macaron_local.store.db import open_db, write_txn
from macaron_local.store.exchange import FORMAT_VERSION, export_session, import_session
from macaron_local.store.migrations import MIGRATIONS, migrate
from macaron_local.store.records import (
    NewToolCall,
    NewTurn,
    RecoveryReport,
    SearchHit,
    SessionRecord,
    SummaryRecord,
    ToolCallRecord,
    TurnRecord,
)
from macaron_local.store.recovery import recover
from macaron_local.store.sessions import (
    create_session,
    delete_session,
    get_session,
    list_sessions,
    purge_deleted,
    rename_session,
    restore_session,
    search,
    set_exclude_from_learning,
)
from macaron_local.store.turns import (
    branch,
    commit_turn,
    get_turn,
    newest_tip,
    pending_summaries,
    save_summary,
    set_head,
    siblings,
    summaries,
    tool_calls,
)
from macaron_local.store.ui_state import UiStateRecord, save_ui_state, ui_states

__all__ = [
    "FORMAT_VERSION",
    "MIGRATIONS",
    "NewToolCall",
    "NewTurn",
    "RecoveryReport",
    "SearchHit",
    "SessionRecord",
    "SummaryRecord",
    "ToolCallRecord",
    "TurnRecord",
    "UiStateRecord",
    "branch",
    "commit_turn",
    "create_session",
    "delete_session",
    "export_session",
    "get_session",
    "get_turn",
    "import_session",
    "list_sessions",
    "migrate",
    "newest_tip",
    "open_db",
    "pending_summaries",
    "purge_deleted",
    "recover",
    "rename_session",
    "restore_session",
    "save_summary",
    "save_ui_state",
    "search",
    "set_exclude_from_learning",
    "set_head",
    "siblings",
    "summaries",
    "tool_calls",
    "ui_states",
    "write_txn",
]
