"""A real runtime (embedded model, real SQLite) under a fast test profile."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.views import View
from tests.conftest import macaron_home

FAST_PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "test-fast"
version = "1.0.0"
description = "tall-local with short answers, for tests"

[summary]
max_tokens = 40

[sampling.defaults]
temperature = 0.0
max_tokens = 24

[sampling.overrides.L2]
max_tokens = 24
"""


def write_fast_profile(home: Path, extra: str = "", name: str = "test-fast") -> None:
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    text = FAST_PROFILE.replace('id = "test-fast"', f'id = "{name}"')
    (folder / f"{name}.toml").write_text(text + extra)


@pytest.fixture(scope="module")
def runtime_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("rt-home")
    write_fast_profile(home)
    return home


@pytest.fixture(scope="module")
def runtime(runtime_home: Path) -> Iterator[Runtime]:
    with macaron_home(runtime_home):
        rt = Runtime.open("test-fast", db_path=runtime_home / "data" / "macaron.db")
    yield rt
    rt.close()


@contextmanager
def captured_views(runtime: Runtime) -> Iterator[list[View]]:
    """Every view ``runtime`` builds meanwhile, in order (its own ``_view``, on the instance)."""
    views: list[View] = []
    build = runtime._view

    def kept(*args: Any, **kw: Any) -> View:
        views.append(build(*args, **kw))
        return views[-1]

    runtime._view = kept  # type: ignore[method-assign]
    try:
        yield views
    finally:
        del runtime._view
