"""Code asks the profile for a role, never for a label literal: a profile with other labels
routes with its own router, draws UIs with its own GenUI label and names them after their roles."""

from __future__ import annotations

import tomllib

import tomli_w

from macaron_local.genui.serving import agent_label, genui_label
from macaron_local.hcp import load_profile

RENAMED = {"L0": "talk", "L1": "doer", "L2": "coder", "L3": "screens"}


def _renamed(tmp_path):
    """The bundled profile with every label renamed (and so every table keyed by label)."""
    data = tomllib.loads(load_profile("tall-local").source.read_text())  # type: ignore[union-attr]

    def rename(obj):
        if isinstance(obj, dict):
            return {RENAMED.get(k, k): rename(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [rename(v) for v in obj]
        return RENAMED.get(obj, obj) if isinstance(obj, str) else obj

    data = rename(data)
    data.pop("extends", None)
    for adapter in data["adapters"].values():
        adapter["revision"] = "none"  # the manifest ships adapters for L0..L3 only
    data["profile"]["id"] = "renamed"
    data["router"]["grammar"] = " | ".join(f'"{lb}"' for lb in RENAMED.values()).join(
        ["root ::= ", ""]
    )
    path = tmp_path / "renamed.toml"
    path.write_text(tomli_w.dumps(data))
    return load_profile(path)


def test_roles_name_the_labels(tmp_path) -> None:
    shipped = load_profile("tall-local")
    assert (shipped.router_label, agent_label(shipped), genui_label(shipped)) == ("L0", "L1", "L3")
    assert [shipped.display_name(lb) for lb in shipped.labels] == [
        "Chat",
        "Agent",
        "Coding",
        "GenUI",
    ]
    other = _renamed(tmp_path)
    assert other.labels == ("talk", "doer", "coder", "screens")
    assert (other.router_label, agent_label(other), genui_label(other)) == (
        "talk",
        "doer",
        "screens",
    )
    assert other.label_for("coding") == "coder" and other.label_for("nothing") is None
    assert other.display_name("doer") == "Agent"
