"""``WatchedObjects`` answers as the dict merged from its parts in order, overrides on top, would."""

from __future__ import annotations

import random
from typing import Any

import pytest

from haptic.controller.reconcile.watched_objects import ObjectKey, WatchedObjects


def _merged(parts: list[dict[ObjectKey, Any]], overrides: dict[ObjectKey, Any]) -> dict[ObjectKey, Any]:
    found: dict[ObjectKey, Any] = {}
    for part in parts:
        found.update(part)
    for key, obj in overrides.items():
        if obj is None:
            found.pop(key, None)
        else:
            found[key] = obj
    return found


@pytest.mark.parametrize("seed", range(100))
def test_lookups_and_iteration_are_those_of_the_merged_dict(seed: int) -> None:
    rng = random.Random(seed)
    keys: list[ObjectKey] = [(kind, "ns", f"o{i}") for kind in ("Ingress", "Service") for i in range(6)]
    parts = [{k: {"v": rng.random()} for k in rng.sample(keys, rng.randint(0, 8))} for _ in range(rng.randint(0, 3))]
    overrides = {k: (None if rng.random() < 0.5 else {"o": rng.random()}) for k in rng.sample(keys, rng.randint(0, 4))}
    objects = WatchedObjects(tuple(parts)).with_overrides(overrides)
    expected = _merged(parts, overrides)
    assert dict(objects) == expected
    assert len(objects) == len(expected)
    for key in keys:
        assert (key in objects) == (key in expected)
        assert objects.get(key) == expected.get(key)


def test_overrides_stack_and_leave_the_parts_alone() -> None:
    a: ObjectKey = ("Ingress", "ns", "a")
    b: ObjectKey = ("Ingress", "ns", "b")
    part = {a: {"v": 1}, b: {"v": 2}}
    base = WatchedObjects((part,))
    held = base.with_overrides({a: {"v": 0}}).with_overrides({b: None})
    assert dict(held) == {a: {"v": 0}}
    assert dict(base) == {a: {"v": 1}, b: {"v": 2}}
    assert part == {a: {"v": 1}, b: {"v": 2}}
    assert base.with_overrides({}) is base
