"""``same_items``: the very same objects in the same order, not equal ones."""

from __future__ import annotations

from haptic.core.identity import same_items


def test_the_same_objects_in_order_are_the_same_items_and_equal_copies_are_not() -> None:
    a, b = {"x": 1}, {"y": 2}
    assert same_items([a, b], (a, b))
    assert not same_items([a, b], [b, a])
    assert not same_items([a, b], [a, dict(b)])
    assert not same_items([a], [a, b])
