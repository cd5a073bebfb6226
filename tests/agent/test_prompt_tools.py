"""The L1 prompt lists the tools' functions, the router's keeps the modules (issue 24).

L1 called ``reminders.search``, which does not exist, because its prompt listed tool modules
only. The prompt the real runtime serves L1 now names every function the bundled plugins
register, with their real parameters, and nothing else; the router's prompt is the short module
list it was trained on. Training renders the same L1 prompt as serving: the bootstrap mix, the
summary rows and the experience prompts.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from macaron_local.agent.tools import ToolRegistry, ToolSpec
from macaron_local.experience.datasets import prompt_messages
from macaron_local.hcp.schema import ToolCatalog
from macaron_local.refine.bootstrap import label_examples
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import route_messages
from macaron_local.turns.tools import tool_descriptions
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

DATA = Path(__file__).resolve().parents[2] / "models" / "data"
CALL = re.compile(r"\b([a-z_]+)\.([a-z_]+)\(([^()]*)\)")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    home = tmp_path_factory.mktemp("prompt-home")
    write_fast_profile(home)
    with macaron_home(home):
        rt = Runtime.open("test-fast", db_path=home / "data" / "macaron.db")
    yield rt
    rt.close()


def served_l1_prompt(rt: Runtime) -> str:
    view = rt._view(rt.profile.agent_label, [], "remind me to call mom at 5pm")
    return view.messages[0]["content"]


def calls_in(text: str) -> dict[str, list[str]]:
    """``module.function -> parameter names`` of every call written in ``text``."""
    return {
        f"{m}.{f}": [p.split("=")[0].strip(" *") for p in args.split(",") if p.strip()]
        for m, f, args in CALL.findall(text)
    }


def test_the_served_l1_prompt_names_the_real_functions_and_only_those(runtime: Runtime) -> None:
    system = served_l1_prompt(runtime)
    listed = calls_in(system)
    real = {
        name: spec
        for name, spec in runtime.registry.tools.items()
        if spec.plugin != "toolsmith"  # the toolsmith is bound by its own names, not listed
    }
    assert set(listed) == set(real)
    for name, params in listed.items():
        assert params == list(inspect.signature(real[name].func).parameters), name
    assert "reminders.add(text, at)" in system
    assert "reminders.search" not in system


def test_the_router_prompt_keeps_the_module_list(runtime: Runtime) -> None:
    """Unchanged in size: exactly the ``module: one line`` list, no function in it."""
    modules = {m: d for m, d in runtime.registry.descriptions().items() if m != "toolsmith"}
    served = route_messages(runtime.profile, "", runtime.tools)[0]["content"]
    assert served == runtime.profile.router_prompt(modules)
    assert calls_in(served) == {}
    assert "- reminders: set and list reminders at a date and time" in served


def test_training_renders_the_l1_prompt_serving_sends(runtime: Runtime) -> None:
    """Bootstrap's L1 mix (agent episodes and L1 summary rows) and the experience prompts."""
    served = served_l1_prompt(runtime)
    label = runtime.profile.agent_label
    mix = label_examples(DATA, label, runtime.profile, tool_descriptions())
    assert len(mix) > 200
    assert {ex["messages"][0]["content"] for ex in mix} == {served}
    experience = prompt_messages(runtime.profile, label, "add milk", tool_descriptions())
    assert experience[0]["content"] == served


def test_a_call_shows_names_and_defaults_not_types() -> None:
    def add(title: str, due: str | None = None, *tags: str, **extra: int) -> None: ...

    assert ToolSpec("todos.add", add).call() == "todos.add(title, due=None, *tags, **extra)"
    assert ToolSpec("clock.now", lambda: "").call() == "clock.now()"


def test_the_catalog_lists_the_chosen_tools_by_module(bundled_registry: ToolRegistry) -> None:
    reg = ToolRegistry(dict(bundled_registry.tools), dict(bundled_registry.modules))
    catalog = reg.catalog(["reminders.add", "reminders.list", "clock.now"])
    assert isinstance(catalog, ToolCatalog)
    assert dict(catalog) == {
        "clock": reg.modules["clock"],
        "reminders": reg.modules["reminders"],
    }
    assert catalog.functions("reminders") == ("reminders.add(text, at)", "reminders.list()")
    assert catalog.agent_lines() == {
        "clock.now()": reg.modules["clock"],
        "reminders.add(text, at), reminders.list()": reg.modules["reminders"],
    }
