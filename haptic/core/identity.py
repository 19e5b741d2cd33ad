"""``same_items(a, b)``: whether two sequences hold the very same objects in the same order.

The memos of the passes over a large cluster ask it of the objects they were computed from: store objects are
replaced, never mutated, on change, so the same objects give the same answer. Identity, at C speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

__all__ = ["same_items"]


def same_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))
