"""The app's ``/remote`` end to end: real facade, real engine, a real llama.cpp server behind the
fault proxy. A forced turn is answered remotely and stored as remote; a failing server makes the
next one rerun locally, with a notification and the reason on the badge and in the store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.experience import set_user_choice
from macaron_local.facade import Assistant
from macaron_local.store import get_turn, open_db
from macaron_local.tui.app import make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.messages import AssistantMessage
from tests.remote.faultproxy import Fault, FaultProxy
from tests.tui.conftest import SIZE, chat, send, wait_for

pytestmark = pytest.mark.anyio


async def test_slash_remote_on_the_real_stack(
    remote_env: FaultProxy, runtime_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MACARON_HOME", str(runtime_home))  # where the test-hybrid profile is
    set_user_choice(False)  # already chose: no first-run explainer (tests/tui/test_learning.py)
    db_path = tmp_path / "macaron.db"
    assistant = Assistant("test-hybrid", db_path=db_path)
    app = make_app(Settings(), assistant, settings_file=tmp_path / "settings.toml")
    seen: list[str] = []
    notify = app.notify
    app.notify = lambda message, **kw: (
        seen.append(f"{kw.get('title', '')}: {message}"),  # type: ignore[method-assign]
        notify(message, **kw),
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: assistant.ready, timeout=180)
            assert assistant.remote_endpoint() == remote_env.url
            await send(pilot, "/chat")  # pin L0 (L1's tool loop would stay local)
            await send(pilot, "/remote Say hello.", wait=False)
            await wait_for(pilot, lambda: chat(pilot).job is None, timeout=180)
            first = list(app.chat.query(AssistantMessage))[-1]
            assert first.item is not None and first.badge_text == "L0 Chat · pinned · remote"
            assert [r.path for r in remote_env.requests].count("/v1/chat/completions") == 1
            remote_env.set(Fault("status", 500))
            await send(pilot, "/remote Say goodbye.", wait=False)
            await wait_for(pilot, lambda: chat(pilot).job is None, timeout=180)
            second = list(app.chat.query(AssistantMessage))[-1]
            assert second.item is not None
            assert second.badge_text == "L0 Chat · pinned · local (remote failed: server_error)"
            assert any(n.startswith("Remote failed:") and "answering locally" in n for n in seen)
    finally:
        assistant.close()
    db = open_db(db_path)
    stored = [get_turn(db, w.item.id) for w in (first, second)]  # type: ignore[union-attr]
    assert [(t.request, t.backend, t.failover_reason) for t in stored] == [
        ("Say hello.", "remote", None),
        ("Say goodbye.", "local", "server_error"),
    ]
