"""``macaron plugins list|enable|disable`` through click's CliRunner."""

from __future__ import annotations

from click.testing import CliRunner

from macaron_local import paths
from macaron_local.plugins.cli import plugins_group


def test_list_disable_enable() -> None:
    runner = CliRunner()
    out = runner.invoke(plugins_group, ["list"])
    assert out.exit_code == 0, out.output
    assert "personal" in out.output and "todos.add" in out.output
    out = runner.invoke(plugins_group, ["disable", "shell"])
    assert out.exit_code == 0 and "disabled shell" in out.output
    assert 'disabled = [\n    "shell",\n]' in (paths.config_dir() / "plugins.toml").read_text()
    listed = runner.invoke(plugins_group, ["list"]).output
    assert any(line.startswith("shell") and "disabled" in line for line in listed.splitlines())
    assert runner.invoke(plugins_group, ["enable", "shell"]).exit_code == 0
    assert "shell.run" in runner.invoke(plugins_group, ["list"]).output


def test_unknown_plugin_is_an_error() -> None:
    out = CliRunner().invoke(plugins_group, ["disable", "nope"])
    assert out.exit_code != 0 and "no plugin named 'nope'" in out.output
