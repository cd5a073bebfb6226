"""The profile's ``[resources]`` reach llama.cpp: a profile that sets the KV type, the batch
sizes and the parked-snapshot budget runs with them (the real engine on the embedded model),
and a combination llama.cpp cannot run is refused when the profile loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.errors import ContractError
from macaron_local.hcp import load_profile
from macaron_local.turns.pipeline import Runtime, engine_config, resident_slots, snapshot_mb
from macaron_local.turns.turn import TurnRequest
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

RESOURCES = """
[resources]
n_ctx = 2048
kv_type = "f32"
flash_attn = false
n_batch = 256
n_ubatch = 128
snapshot_mb = 32
resident_slots = 3
"""


def test_profile_resources_reach_the_engine(tmp_path: Path) -> None:
    write_fast_profile(tmp_path, RESOURCES, name="test-resources")
    with macaron_home(tmp_path):
        with Runtime.open("test-resources", db_path=tmp_path / "m.db") as rt:
            c = rt.engine.config
            assert (c.n_ctx, c.kv_type, c.flash_attn) == (2048, "f32", False)
            assert (c.n_batch, c.n_ubatch, c.snapshot_mb) == (256, 128, 32)
            assert c.resident_slots == 3 and rt.engine.n_ctx == 2048  # 2048 per sequence
            s = rt.new_session()
            turn = rt.run_turn(TurnRequest(s.id, "Say hi.", label="L0"))
            assert turn.answer and turn.profile_hash == rt.profile.content_hash
            # the turn records what the engine ran with
            assert turn.meta["engine"] == {
                "n_ctx": 2048,
                "kv_type": "f32",
                "flash_attn": False,
                "n_gpu_layers": 0,
                "offload_kqv": c.offload_kqv,
                "resident_slots": 3,
                "memory": "attention",
            }


def test_q8_kv_without_flash_attention_is_refused(tmp_path: Path) -> None:
    write_fast_profile(tmp_path, '[resources]\nkv_type = "q8_0"\nflash_attn = false\n', "q8")
    with macaron_home(tmp_path), pytest.raises(ContractError, match="q8_0 needs flash"):
        load_profile("q8")


def test_resident_slots_follow_where_the_kv_lives(tmp_path: Path) -> None:
    """Unset, one sequence on a CPU (parked snapshots) and a seat per live slot (the router,
    each label's view and summary) when layers and the KV are on a GPU; set, the profile's."""
    on_gpu = "[resources]\nn_gpu_layers = -1\noffload = true\n"
    write_fast_profile(tmp_path)
    write_fast_profile(tmp_path, on_gpu, name="on-gpu")
    write_fast_profile(tmp_path, on_gpu + "resident_slots = 2\n", name="small-gpu")
    with macaron_home(tmp_path):
        cpu, gpu, small = (load_profile(n) for n in ("test-fast", "on-gpu", "small-gpu"))
    assert resident_slots(cpu.resources, len(cpu.labels)) == 1
    assert resident_slots(gpu.resources, len(gpu.labels)) == 1 + 2 * len(gpu.labels)
    assert resident_slots(small.resources, len(small.labels)) == 2


def test_the_snapshot_budget_follows_the_host_memory(tmp_path: Path) -> None:
    """Unset, an eighth of the memory available at start within 256 MiB - 4 GiB; set, the
    profile's. The engine's settings get it."""
    write_fast_profile(tmp_path)
    write_fast_profile(tmp_path, "[resources]\nsnapshot_mb = 48\n", name="fixed")
    with macaron_home(tmp_path):
        unset, fixed = (load_profile(n).resources for n in ("test-fast", "fixed"))
    gib = 1 << 30
    assert [snapshot_mb(unset, n * gib) for n in (1, 16, 64)] == [256, 2048, 4096]
    assert snapshot_mb(unset, None) in range(256, 4097) and snapshot_mb(fixed, 64 * gib) == 48
    assert engine_config(unset).snapshot_mb in range(256, 4097)
    assert engine_config(fixed).snapshot_mb == 48
