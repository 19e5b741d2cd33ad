"""Id sources: sequential, seeded (replayable) and uuid4."""

from __future__ import annotations

import uuid

from haptic.core import SeededIds, SequentialIds, UuidIds


def test_sequential_ids_count_up_with_a_prefix() -> None:
    ids = SequentialIds("ev-", start=7)
    assert [ids.new_id() for _ in range(3)] == ["ev-7", "ev-8", "ev-9"]


def test_seeded_ids_replay_for_the_same_seed_and_look_like_uuid4() -> None:
    a, b = SeededIds(42), SeededIds(42)
    run_a = [a.new_id() for _ in range(5)]
    run_b = [b.new_id() for _ in range(5)]
    assert run_a == run_b
    assert len(set(run_a)) == 5
    assert all(uuid.UUID(i).version == 4 for i in run_a)
    assert SeededIds(43).new_id() != run_a[0]


def test_uuid_ids_are_unique_uuid4() -> None:
    ids = UuidIds()
    made = [ids.new_id() for _ in range(100)]
    assert len(set(made)) == 100
    assert all(uuid.UUID(i).version == 4 for i in made)
