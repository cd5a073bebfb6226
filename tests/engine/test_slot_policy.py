"""Which parked KV snapshot goes when the budget is full: specialists take turns in a cycle,
and least-recently-used eviction dropped exactly the slot needed next (0 of 10 reuses where 2
would fit, in a 60-turn session). The table's own policy, with snapshots as plain bytes (the
engine supplies llama.cpp's save/restore; tests/engine/test_engine.py runs it for real)."""

from __future__ import annotations

from macaron_local.engine.slots import SlotTable

SNAPSHOT = 1000  # bytes per parked slot


def _table(budget_slots: int, seats: int = 1, saves: list[int] | None = None) -> SlotTable:
    def save(seq: int) -> bytearray:
        if saves is not None:
            saves.append(seq)
        return bytearray(SNAPSHOT)

    return SlotTable(
        save=save,  # type: ignore[arg-type]
        restore=lambda seq, buf: True,
        clear=lambda seq: True,
        budget_bytes=budget_slots * SNAPSHOT,
        seats=seats,
    )


def _reuses(table: SlotTable, pattern: list[str]) -> int:
    """Turns whose slot still had its snapshot (its prefix is reused, not re-evaluated)."""
    hits = 0
    for key in pattern:
        slot = table.get(key, adapter=key)
        hits += slot.snapshot is not None
        table.enter(slot)
        slot.tokens = [1, 2, 3]  # it now holds a prefix
    return hits


def test_a_cycle_of_specialists_keeps_reusing_what_fits() -> None:
    cycle = ["view:L0", "view:L1", "view:L2", "view:L3", "summary"] * 12
    hits = _reuses(_table(budget_slots=2), cycle)
    # 4 parked slots compete for 2 places: each round, the two needed soonest are kept
    assert hits >= 2 * 10


def test_the_slot_due_soonest_is_kept_over_a_more_recent_one() -> None:
    """L0 and L2 alternate, then a one-off request (an API call) comes: room for one parked
    snapshot. L0 is due next, so L2 (used more recently, due later) is dropped, not L0; then
    the one-off (never due again) goes before L0 or L2."""
    table = _table(budget_slots=1)
    _reuses(table, ["view:L0", "view:L2", "view:L0", "view:L2", "api:once"])
    parked = {k for k, s in table._slots.items() if s.snapshot is not None}
    assert parked == {"view:L0"}  # least-recently-used eviction would have kept view:L2
    assert _reuses(table, ["view:L0"]) == 1
    parked = {k for k, s in table._slots.items() if s.snapshot is not None}
    assert parked == {"api:once"}  # the only one parked; with L2 it would go first
    _reuses(table, ["view:L2"])
    assert {k for k, s in table._slots.items() if s.snapshot is not None} == {"view:L0"}


def test_with_a_seat_per_slot_a_cycle_never_parks() -> None:
    """Resident placement (a KV sequence per live slot, the GPU design): specialists taking
    turns switch without a single copy to or from the host."""
    saves: list[int] = []
    table = _table(budget_slots=0, seats=5, saves=saves)
    _reuses(table, ["view:L0", "view:L1", "view:L2", "view:L3", "summary"] * 4)
    assert saves == []  # nothing was ever parked
    seats = {s.seq for s in table._slots.values()}
    assert seats == {0, 1, 2, 3, 4}  # each slot kept its own sequence


def test_when_seats_run_out_the_slot_needed_furthest_ahead_gives_its_seat_up() -> None:
    """Three seats, L0 and L2 alternating, then a one-off request: it takes the seat of the
    slot not due again (view:L1, used once), not that of L0 or L2."""
    saves: list[int] = []
    table = _table(budget_slots=4, seats=3, saves=saves)
    _reuses(table, ["view:L1", "view:L0", "view:L2", "view:L0", "view:L2"])
    assert saves == []
    l1_seat = table._slots["view:L1"].seq
    _reuses(table, ["api:once"])
    assert table._slots["api:once"].seq == l1_seat and saves == [l1_seat]
    assert table._slots["view:L1"].snapshot is not None  # parked on the host, not lost
    assert table._slots["view:L0"].seq is not None and table._slots["view:L2"].seq is not None


def test_checkpoints_keep_the_stable_prefix_and_the_latest_and_go_with_the_adapter() -> None:
    table = _table(budget_slots=4)
    slot = table.get("route", adapter="L0")
    table.enter(slot)
    for tokens in ([1, 2], [1, 2, 3], [1, 2, 4], [1, 2, 4, 5], [1, 2, 4, 5, 6]):
        slot.tokens = list(tokens)
        table.checkpoint(slot, bytearray(10), limit=3)  # type: ignore[arg-type]
    # [1, 2, 3] is no prefix of what the slot read later: it can serve no later prompt
    assert [c.tokens for c in slot.checkpoints] == [(1, 2), (1, 2, 4, 5), (1, 2, 4, 5, 6)]
    best = table.best_checkpoint(slot, [1, 2, 4, 5, 9], cap=4)
    assert best is not None and best.tokens == (1, 2, 4, 5)
    assert table.best_checkpoint(slot, [7, 2], cap=1) is None
    table.get("route", adapter="L1")  # another adapter: nothing read under L0 is reused
    assert slot.checkpoints == [] and slot.tokens == []


def test_checkpoints_count_against_the_host_budget() -> None:
    """A hybrid base's checkpoint holds its attention cells too (hundreds of MB at 32k): the
    budget bounds them, parked slots going first, then the checkpoints of the slot needed
    furthest ahead, never the one just taken."""
    table = _table(budget_slots=3)  # 3000 bytes
    a, b = table.get("a", adapter="L0"), table.get("b", adapter="L0")
    table.enter(a)
    a.tokens = [1]
    table.checkpoint(a, bytearray(1000), limit=3)  # type: ignore[arg-type]
    a.tokens = [1, 2]
    table.checkpoint(a, bytearray(1000), limit=3)  # type: ignore[arg-type]
    table.enter(b)  # a is parked: its snapshot (1000) and checkpoints (2000) fill the budget
    assert a.host_bytes == 3000 and a.snapshot is not None
    b.tokens = [7]
    table.checkpoint(b, bytearray(1000), limit=3)  # type: ignore[arg-type]
    assert a.host_bytes == 0 and a.checkpoints == []  # the parked slot went first
    b.tokens = [7, 8]
    table.checkpoint(b, bytearray(2500), limit=3)  # type: ignore[arg-type]
    assert [c.tokens for c in b.checkpoints] == [(7, 8)]  # the older one made room
