"""One broken user model manifest (here a directory named like one: it cannot be read) is named
where it matters and takes nothing else down: profiles on other bases still load, ``models
list`` lists the rest and names it, and a profile whose base it may have been says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from macaron_local import paths
from macaron_local.errors import ContractError
from macaron_local.hcp import bundled_dir, load_profile
from macaron_local.manifests import manifest_problems
from macaron_local.model_manager.cli import models_group


def _broken() -> str:
    bad = paths.ensure(paths.data_dir() / "models" / "mine.toml")  # a directory: unreadable
    return str(bad)


def test_a_broken_user_manifest_does_not_take_the_profiles_down() -> None:
    bad = _broken()
    assert load_profile("tall-local").base.model  # on another base: loads as before
    [problem] = manifest_problems()
    assert str(problem).startswith(bad) and "cannot read this model manifest" in str(problem)


def test_models_list_names_it_and_lists_the_rest() -> None:
    bad = _broken()
    result = CliRunner().invoke(models_group, ["list"])
    assert result.exit_code == 0, result.output
    assert "smollm2-135m-instruct-q4_1" in result.stdout
    assert f"error: {bad}: cannot read this model manifest" in result.stderr


def test_a_profile_on_a_missing_base_names_the_broken_manifest(tmp_path: Path) -> None:
    bad = _broken()
    text = (bundled_dir() / "tall-local.toml").read_text()
    base = load_profile("tall-local").base.model
    (tmp_path / "p.toml").write_text(text.replace(f'"{base}"', '"mine"'))
    with pytest.raises(ContractError) as err:
        load_profile(tmp_path / "p.toml")
    assert err.value.where == "base.model" and bad in str(err.value)
