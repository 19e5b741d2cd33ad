"""``overlaid``: bases merged in order, then the changes (``None``: removed)."""

from __future__ import annotations

from haptic.core.overlays import overlaid


def test_changes_over_merged_bases_set_and_remove_keys_and_leave_the_bases_as_they_were() -> None:
    first, second = {"a": 1, "b": 2}, {"b": 3, "c": 4}
    found = overlaid((first, second), {"a": None, "d": 5, "zz": None})
    assert found == {"b": 3, "c": 4, "d": 5}
    assert first == {"a": 1, "b": 2} and second == {"b": 3, "c": 4}
    assert overlaid((), {"x": None}) == {}
