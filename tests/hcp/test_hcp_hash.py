"""The canonical content hash: stable across layout, kept by a TOML round trip; drift warnings."""

from __future__ import annotations

import json
import random

import tomli_w

from macaron_local.hcp import canonical_json, drift_warning, dump_toml, load_profile


def _shuffled(value, rng: random.Random):
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    return value


def test_round_trip_keeps_the_hash(write_file) -> None:
    for name in ("tall-local", "tall-gpu", "hybrid"):
        profile = load_profile(name)
        again = load_profile(write_file(f"{name}-dump.toml", dump_toml(profile)))
        assert again.content_hash == profile.content_hash
        assert again == profile


def test_hash_is_stable_across_key_order_and_whitespace(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    reference = load_profile(write_file("a.toml", doc)).content_hash
    assert reference == load_profile("tall-local").content_hash
    for seed in range(3):
        text = tomli_w.dumps(_shuffled(doc, random.Random(seed)), indent=8)
        spaced = "\n\n# a comment\n" + text.replace(" = ", "   =   ").replace("\n[", "\n\n\n[")
        assert load_profile(write_file(f"s{seed}.toml", spaced)).content_hash == reference


def test_defaults_and_pattern_order_do_not_change_the_hash(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["router"]["decode_budget"] = 24  # the default, spelled out
    doc["tools"]["allow"]["L1"] = ["*", "*"]  # duplicates carry no meaning
    expected = load_profile("tall-local").content_hash
    assert load_profile(write_file("a.toml", doc)).content_hash == expected


def test_any_real_change_changes_the_hash(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["prompts"]["L2"]["skills"].append("Write tests first.")
    before = load_profile("tall-local").content_hash
    assert load_profile(write_file("a.toml", doc)).content_hash != before


def test_canonical_json_is_sorted_and_compact() -> None:
    text = canonical_json(load_profile("tall-local"))
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert text == json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_drift_warning_names_both_hashes(write_file, bundled_doc) -> None:
    profile = load_profile("tall-local")
    assert drift_warning(profile.content_hash, profile) is None
    assert drift_warning(None, profile) is None
    assert drift_warning(profile.contract_hash, profile) is None
    other = load_profile("hybrid").contract_hash
    warning = drift_warning(other, profile, label="L2")
    assert warning is not None
    assert other in warning and profile.contract_hash_for("L2") in warning and "L2" in warning


def test_contract_hash_ignores_revision_pointers() -> None:
    profile = load_profile("tall-local")
    adapters = {k: v.model_copy(update={"revision": "none"}) for k, v in profile.adapters.items()}
    repointed = profile.model_copy(update={"adapters": adapters})
    assert repointed.content_hash != profile.content_hash
    assert repointed.contract_hash == profile.contract_hash
    prompts = dict(profile.prompts)
    prompts["L2"] = prompts["L2"].model_copy(update={"system": "Answer in haiku."})
    reprompted = profile.model_copy(update={"prompts": prompts})
    assert reprompted.contract_hash != profile.contract_hash


def test_contract_hash_ignores_what_the_model_never_sees() -> None:
    profile = load_profile("tall-local")
    changed = profile.model_copy(
        update={
            "memory": profile.memory.model_copy(update={"summary_wait_s": 9.0}),
            "experience": profile.experience.model_copy(update={"max_regression": 0.5}),
            "resources": profile.resources.model_copy(update={"threads": 7}),
        }
    )
    assert changed.content_hash != profile.content_hash  # turns record the change...
    assert changed.contract_hash == profile.contract_hash  # ...adapters are not drifted by it
    reserve = profile.memory.model_copy(update={"own_turns": "summary"})  # a view change is
    assert profile.model_copy(update={"memory": reserve}).contract_hash != profile.contract_hash
