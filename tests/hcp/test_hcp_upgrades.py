"""Schema upgrades: a real v0 document loads as the v1 profile it meant."""

from __future__ import annotations

import pytest

from macaron_local.errors import ContractError
from macaron_local.hcp import UPGRADES, load_profile, upgrade, upgrade_v0_to_v1


def _v0_doc(v1: dict) -> dict:
    """The v1 tall-local written the v0 way: flat route_* keys, base_model, bare revisions."""
    doc = {k: v for k, v in v1.items() if k not in ("router", "base", "adapters")}
    router = dict(v1["router"])
    doc["schema_version"] = 0
    doc["route_prompt"] = router.pop("system_prompt")
    doc["route_grammar"] = router.pop("grammar")
    doc["route_labels"] = router.pop("labels")
    doc["route_budget"] = router.pop("decode_budget")
    doc["router"] = router
    doc["base_model"] = v1["base"]["model"]
    doc["adapters"] = {label: a["revision"] for label, a in v1["adapters"].items()}
    return doc


def test_registry_has_the_v0_step() -> None:
    assert UPGRADES[0] is upgrade_v0_to_v1


def test_v0_document_upgrades_and_loads(write_file, bundled_doc) -> None:
    v1 = bundled_doc()
    v0 = _v0_doc(v1)
    before = repr(v0)
    up = upgrade(v0)
    assert repr(v0) == before  # steps never mutate their input
    assert up["schema_version"] == 1 and "route_prompt" not in up
    assert up["router"]["system_prompt"] == v1["router"]["system_prompt"]
    assert up["base"] == {"model": "smollm2-135m-instruct-q4_1"}
    assert up["adapters"]["L1"]["revision"] == v1["adapters"]["L1"]["revision"]
    # v0 had no per-adapter descriptions, so the v1 profile differs only in those
    for label in v1["adapters"]:
        v1["adapters"][label].pop("description")
    assert load_profile(write_file("v0.toml", v0)) == load_profile(write_file("v1.toml", v1))


def test_v0_keys_of_the_wrong_shape_are_left_for_validation(write_file, bundled_doc) -> None:
    v0 = _v0_doc(bundled_doc())
    v0["router"] = "not a table"
    with pytest.raises(ContractError) as err:
        load_profile(write_file("v0.toml", v0))
    assert err.value.where is not None


@pytest.mark.parametrize("version", [-1, 2, "1", True, 1.0])
def test_unusable_versions(version) -> None:
    with pytest.raises(ContractError) as err:
        upgrade({"schema_version": version})
    assert err.value.where == "schema_version"
