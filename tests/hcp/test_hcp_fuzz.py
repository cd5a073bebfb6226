"""Fuzzing the loader: whatever the file holds, it returns a Profile or raises ContractError."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from macaron_local.errors import ContractError
from macaron_local.hcp import Profile, bundled_dir, load_profile

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KEYS = st.sampled_from(
    [
        "schema_version",
        "extends",
        "profile",
        "id",
        "version",
        "base",
        "model",
        "adapters",
        "revision",
        "role",
        "router",
        "labels",
        "grammar",
        "fallback",
        "descriptions",
        "L0",
        "L1",
        "L2",
        "L3",
        "prompts",
        "system",
        "skills",
        "tools",
        "allow",
        "repl",
        "limits",
        "sampling",
        "defaults",
        "overrides",
        "remote",
        "enabled",
        "endpoint",
        "heavy",
        "experience",
        "opt_in",
    ]
) | st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats()
    | st.text(st.characters(codec="utf-8"), max_size=20)
    | st.sampled_from(["none", "bundled", "L0", "tall-local", "hybrid", "a" * 64, "repl-fence"])
    | st.datetimes()
    | st.dates()
    | st.times()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)
DOCS = st.dictionaries(KEYS, VALUES, max_size=8)


def _bundled(name: str) -> dict[str, Any]:
    return tomllib.loads((bundled_dir() / f"{name}.toml").read_text(encoding="utf-8"))


def _load(path: Path, text: str) -> Profile | None:
    path.write_text(text, encoding="utf-8")
    try:
        profile = load_profile(path)
    except ContractError as exc:
        assert str(exc)  # a message a person can read
        return None
    assert isinstance(profile, Profile) and len(profile.content_hash) == 64
    return profile


@FUZZ
@given(doc=DOCS, version=st.sampled_from([None, 0, 1]))
def test_random_documents(tmp_path: Path, doc: dict[str, Any], version: int | None) -> None:
    if version is not None:
        doc["schema_version"] = version
    _load(tmp_path / "random.toml", tomli_w.dumps(doc))


@FUZZ
@given(text=st.text(st.characters(codec="utf-8"), max_size=300))
def test_random_text(tmp_path: Path, text: str) -> None:
    _load(tmp_path / "text.toml", text)


def _paths(doc: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.extend(_paths(value, (*prefix, key)))
    return out


@FUZZ
@given(
    name=st.sampled_from(["tall-local", "tall-gpu", "hybrid"]),
    data=st.data(),
    action=st.sampled_from(["delete", "replace", "add"]),
)
def test_mutated_real_profiles(tmp_path: Path, name: str, data: st.DataObject, action: str) -> None:
    doc = copy.deepcopy(_bundled(name))
    path = data.draw(st.sampled_from(_paths(doc)))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete":
        del parent[path[-1]]
    elif action == "replace":
        parent[path[-1]] = data.draw(VALUES)
    else:
        target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else parent
        target[data.draw(KEYS)] = data.draw(VALUES)
    _load(tmp_path / "mutated.toml", tomli_w.dumps(doc))


@FUZZ
@given(data=st.data())
def test_corrupted_real_text(tmp_path: Path, data: st.DataObject) -> None:
    text = (bundled_dir() / "tall-local.toml").read_text(encoding="utf-8")
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, min(len(text), start + 40)))
    junk = data.draw(st.text(st.characters(codec="utf-8"), max_size=10))
    _load(tmp_path / "corrupt.toml", text[:start] + junk + text[end:])


@pytest.mark.parametrize("name", ["tall-local", "tall-gpu", "hybrid"])
def test_unmutated_profiles_pass_the_same_harness(tmp_path: Path, name: str) -> None:
    assert _load(tmp_path / f"{name}-copy.toml", tomli_w.dumps(_bundled(name))) is not None
