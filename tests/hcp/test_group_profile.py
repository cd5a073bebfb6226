"""``macaron --profile X CMD``: X reaches CMD's own ``--profile``, or is refused; it never
silently serves the default profile (before, ``macaron --profile X ask ...`` answered under
tall-local)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from macaron_local.cli import main


@pytest.mark.parametrize("args", [["ask", "hi"], ["route", "hi"]])
def test_the_group_profile_reaches_the_command(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["--profile", "no-such-profile", *args])
    assert result.exit_code == 1, result.output
    assert "no profile named 'no-such-profile'" in result.output


def test_the_commands_own_profile_wins() -> None:
    result = CliRunner().invoke(main, ["--profile", "tall-local", "ask", "--profile", "nope", "hi"])
    assert result.exit_code == 1 and "no profile named 'nope'" in result.output


@pytest.mark.parametrize("args", [["plugins", "list"], ["hcp", "list"]])
def test_a_command_without_a_profile_refuses_it(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["--profile", "tall-local", *args])
    assert result.exit_code == 2 and "takes no --profile" in result.output
