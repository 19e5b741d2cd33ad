"""``overlaid(base, changes)``: a dict and the changes made over it since (``None``: the key went), as one dict.

What the views that share one large dict along a line of versions and keep only their own changes (the parsed
configs' sections by key, the watched objects of a change) give when asked for the whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

__all__ = ["overlaid"]

_K = TypeVar("_K")
_V = TypeVar("_V")


def overlaid(bases: Iterable[Mapping[_K, _V]], changes: Mapping[_K, _V | None]) -> dict[_K, _V]:
    """The ``bases`` merged in order, then ``changes`` (a value set, or ``None``: the key removed)."""
    found: dict[_K, _V] = {}
    for base in bases:
        found.update(base)
    for key, value in changes.items():
        if value is None:
            found.pop(key, None)
        else:
            found[key] = value
    return found
