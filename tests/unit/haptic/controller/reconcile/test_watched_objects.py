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


def test_a_store_part_holds_the_objects_of_when_it_was_taken_keyed_when_first_read() -> None:
    from haptic.controller.reconcile.watched_objects import StorePart
    from haptic.k8s.store import ResourceStore

    def slice_(name: str, version: str) -> dict[str, Any]:
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"namespace": "ns", "name": name, "resourceVersion": version}}

    store = ResourceStore("endpoints", ["metadata.namespace", "metadata.name"])
    for name in ("b", "a"):
        store.apply(slice_(name, "1"))
    keyed: list[str] = []

    def key_of(obj: Any) -> ObjectKey:
        keyed.append(obj["metadata"]["name"])
        return ("EndpointSlice", obj["metadata"]["namespace"], obj["metadata"]["name"])

    part = StorePart(store.listed_later(), {}, key_of)
    store.apply(slice_("a", "2"))  # later writes: not in the part
    store.apply(slice_("c", "1"))
    assert keyed == []  # nothing keyed until read
    assert list(part) == [("EndpointSlice", "ns", "a"), ("EndpointSlice", "ns", "b")]
    assert part[("EndpointSlice", "ns", "a")]["metadata"]["resourceVersion"] == "1"
    assert keyed == ["a", "b"]
    later = StorePart(store.listed_later(), part.known, key_of)
    assert len(later) == 3 and keyed == ["a", "b", "a", "c"]  # the unchanged "b" keyed once
