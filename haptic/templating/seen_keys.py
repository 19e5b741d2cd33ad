"""``SeenKeys``: the ``first_seen`` keys claimed so far in one render.

A fragment loop reused in bulk claims again every key its untouched items claimed (10,000 backends of 10,000
Ingresses): inserting them one by one into a dict, per change, was the largest pass of an endpoint change left
in the render (hashing and inserting 10,000 tuples, ~2 ms). Here such a loop lends its record's claims instead:
a *run* is the claims of the items at positions ``start`` to ``stop`` of one loop record (``positions``: key ->
the position of the item that claimed it, built once per record), so claiming a stretch of items is moving
``stop``. The keys claimed one at a time (templates, replayed journals, the loop's changed items) go into
``own``. A key is seen when it is in ``own`` or in a run's range.

Only membership is observable (``first_seen``'s verdicts); ``fingerprint`` tells two states apart where a loop
must know that the keys claimed before it are those of the last render: equal fingerprints mean the same keys.

Must not import the engine or the render context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["SeenKeys"]

Key = tuple[str, ...]


class SeenKeys:
    """The claimed keys: ``own`` (a dict used as an ordered set) and ``runs`` ([positions, start, stop])."""

    __slots__ = ("own", "runs")

    def __init__(self, keys: Iterable[Key] = ()) -> None:
        self.own: dict[Key, None] = dict.fromkeys(keys)
        self.runs: list[list[Any]] = []

    def __contains__(self, key: object) -> bool:
        if key in self.own:
            return True
        for positions, start, stop in self.runs:
            at = positions.get(key)
            if at is not None and start <= at < stop:
                return True
        return False

    def add(self, key: Key) -> None:
        self.own[key] = None

    def add_run(self, positions: dict[Key, int], start: int, stop: int,
                keys_at: Callable[[int, int], Iterable[Key]]) -> None:
        """Claims the keys of ``positions`` at ``start`` to ``stop`` (excluded). ``keys_at(a, b)``: the keys of
        ``positions`` at ``a`` to ``b``; when those between the last run of the same ``positions`` and ``start`` are
        all claimed already (the loop's changed items claimed what they claimed before), that run grows instead of
        a new one starting."""
        if start >= stop:
            return
        runs = self.runs
        if runs:
            last = runs[-1]
            if last[0] is positions and last[2] <= start and all(k in self for k in keys_at(last[2], start)):
                last[2] = stop
                return
        runs.append([positions, start, stop])

    def fingerprint(self) -> tuple[Any, ...]:
        """Equal for two states holding the same keys (not only then: runs of equal records compare by value)."""
        return tuple(self.own), tuple((positions, start, stop) for positions, start, stop in self.runs)
