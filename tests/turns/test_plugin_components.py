"""A plugin's GenUI components reach the running app: the runtime's catalogue holds them, the
GenUI label's answer grammar allows them, and the facade hands the same catalogue to the UI
(the ``register_components`` hook had no caller in the app)."""

from __future__ import annotations

from pathlib import Path

from macaron_local import paths
from macaron_local.facade import Assistant
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import NO_EVENTS
from tests.conftest import macaron_home
from tests.genui.test_catalogue import PLUGIN  # a user plugin: 'rating', and a bad spec
from tests.turns.conftest import write_fast_profile

ANSWER = (
    'Rate it:\n```ui\n{"title": "Dinner", "components": [{"type": "rating", "id": "r", '
    '"label": "Food", "stars": 5, "value": 4}]}\n```'
)


def test_a_user_plugins_component_is_in_the_runtime_catalogue_and_grammar(tmp_path: Path) -> None:
    write_fast_profile(tmp_path)
    with macaron_home(tmp_path):
        folder = paths.config_dir() / "plugins"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "stars.py").write_text(PLUGIN)
        with Runtime.open("test-fast", db_path=tmp_path / "m.db") as rt:
            assert "rating" in rt.ui_catalogue.models
            assert any("Bad Name" in w for w in rt.warnings)  # the broken one is reported
            grammar = rt._ui_grammar(rt.profile.label_for("genui") or "", NO_EVENTS)
            assert grammar is not None and '\\"rating\\"' in grammar
        a = Assistant("test-fast", db_path=tmp_path / "m.db")
        try:
            a.wait_ready(600)
            from macaron_local.genui.stream import split_answer

            doc = split_answer(ANSWER, a.ui_catalogue()).document
            assert doc is not None and doc.initial_state() == {"r": 4}
        finally:
            a.close()
