"""An altered adapter file is caught at load: a named error, base weights, an honest record.

A user manifest overrides the bundled one (same id) and points at copies of the bundled
adapters; 64 KiB of 0xFF is written inside the L2 copy, keeping its size (``models verify``
says corrupt; before this check, ``Runtime.open`` served it and recorded its revision).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from macaron_local import paths
from macaron_local.errors import AdapterChecksumError
from macaron_local.hcp import load_profile
from macaron_local.manifests import get_manifest
from macaron_local.turns import adapters
from macaron_local.turns.adapters import BASE_REVISION
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnRequest

PROFILE = "tall-local"


def base_id() -> str:
    return load_profile(PROFILE).base.model


@pytest.fixture
def altered_l2() -> Path:
    """The embedded model's manifest in the user folder, its adapters copied, L2 corrupted."""
    bundled = get_manifest(base_id())
    assert bundled.manifest_path is not None
    folder = paths.ensure(paths.data_dir() / "models")
    shutil.copy(bundled.manifest_path, folder / bundled.manifest_path.name)
    shutil.copytree(bundled.manifest_path.parent / "adapters", folder / "adapters")
    l2 = folder / "adapters" / "L2.gguf"
    with l2.open("r+b") as fh:
        fh.seek(l2.stat().st_size // 2)
        fh.write(b"\xff" * 65536)
    assert get_manifest(bundled.id).manifest_path == folder / bundled.manifest_path.name
    return l2


def test_the_checksum_names_the_file_and_the_revision(altered_l2: Path) -> None:
    manifest = get_manifest(base_id())
    bound = adapters.resolve(load_profile(PROFILE), manifest)["L2"]
    with pytest.raises(AdapterChecksumError) as err:
        adapters.check_sha256(bound)
    assert err.value.path == altered_l2 and "L2.gguf" in str(err.value)
    adapters.check_sha256(adapters.resolve(load_profile(PROFILE), manifest)["L1"])  # intact


def test_an_altered_adapter_is_not_served_nor_recorded_as_verified(altered_l2: Path) -> None:
    expected = get_manifest(base_id()).adapter("L2")
    assert expected is not None
    with Runtime.open(PROFILE) as rt:
        assert rt.bindings["L2"].adapter is None and rt.bindings["L2"].revision == BASE_REVISION
        assert rt.bindings["L1"].revision == get_manifest(base_id()).adapter("L1").revision
        [warning] = [w for w in rt.warnings if w.startswith("L2:")]
        assert "altered or corrupt" in warning and "base weights" in warning
        session = rt.new_session("corrupt")
        turn = rt.run_turn(TurnRequest(session.id, "Reverse a string in Python.", label="L2"))
    assert turn.adapter_revision == BASE_REVISION != expected.revision
