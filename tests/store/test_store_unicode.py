"""Text SQLite cannot store (lone surrogates: undecodable argv bytes, a JSON "\\ud800" escape)
is a clear StoreError / TurnError and writes nothing; in a search the broken character is
ignored. The
CLI given invalid UTF-8 says so in one line, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils

from macaron_local.errors import StoreError, TurnError
from macaron_local.store import (
    NewTurn,
    branch,
    commit_turn,
    create_session,
    rename_session,
    search,
)
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnRequest
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

BROKEN = "caf\udce9 au lait"  # what b"caf\xe9" becomes under surrogateescape


def test_a_lone_surrogate_is_a_store_error_and_writes_nothing(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Callable
) -> None:
    before = counts(db)
    with pytest.raises(StoreError, match="not valid Unicode"):
        create_session(db, BROKEN)
    sid = create_session(db, "fine").id
    with pytest.raises(StoreError, match="not valid Unicode"):
        rename_session(db, sid, BROKEN)
    with pytest.raises(StoreError, match="not valid Unicode"):
        commit_turn(db, sid, make_turn(request=BROKEN), expected_head=None)
    assert counts(db) == {**before, "sessions": before["sessions"] + 1}


def test_a_search_with_broken_text_is_just_a_search(db: sqlite_utils.Database) -> None:
    create_session(db, "cafe au lait")
    assert search(db, "\ud800") == []
    assert [h.session_title for h in search(db, "lait \ud800")] == ["cafe au lait"]


def test_the_cli_reports_invalid_utf8_in_one_line(tmp_path: Path) -> None:
    macaron = Path(sys.executable).with_name("macaron")
    done = subprocess.run(
        [os.fsencode(macaron), b"ask", b"--label", b"L0", b"caf\xe9 au lait"],
        capture_output=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "not valid Unicode" in err and "Traceback" not in err


def test_a_turn_on_broken_text_is_refused_before_the_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    home = tmp_path_factory.mktemp("unicode-home")
    write_fast_profile(home)
    with macaron_home(home), Runtime.open("test-fast", db_path=home / "m.db") as rt:
        sid = rt.new_session("fine").id
        with pytest.raises(TurnError, match="not valid Unicode"):
            rt.run_turn(TurnRequest(sid, BROKEN, label="L0"))
        assert branch(rt.db(), sid) == []
