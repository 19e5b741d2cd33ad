"""Identity memos: ``same_items(a, b)`` (two sequences hold the very same objects in the same order) and
``Recent`` (answers for the last few objects, by identity, or by value where asked).

The memos of the passes over a large cluster ask them of the objects they were computed from: store objects are
replaced, never mutated, on change, so the same objects give the same answer. Identity, at C speed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from operator import is_
from typing import Any, Generic, TypeVar

__all__ = ["Recent", "same_items"]

_V = TypeVar("_V")


def same_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    # the very same sequence: a memo's answer handed on (the statuses of a render that changed none of them)
    return a is b or (len(a) == len(b) and all(map(is_, a, b)))


def same_input(items: object, last_input: object, last_items: Sequence[Any]) -> bool:
    """Whether ``items`` is the very list or tuple a pass was last given (whose items were ``last_items``): its
    items at once, without a copy or a walk. Of as many items only: a list ``shared.append`` grows is the same
    object with more (nothing else changes one: stores replace objects, templates and memo answers change none)."""
    return items is last_input and isinstance(items, list | tuple) and len(items) == len(last_items)


class Recent(Generic[_V]):
    """The answers for the last ``keep`` (object, tag) pairs asked, by the object's identity (or by value, see
    ``answer``): a large text worked on by several passes of one change (each entry holds its object, so its id
    is not reused meanwhile). Safe from several threads (renders, checks and event recording may run off the
    event loop)."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._answers: dict[tuple[int, Hashable], tuple[object, _V]] = {}
        self._lock = threading.Lock()

    def answer(self, obj: object, tag: Hashable, compute: Callable[[], _V], *, by_value: bool = False) -> _V:
        """``by_value``: on a miss, an entry of the same tag whose object is equal (``==``) gives its answer, for
        texts that arrive again as other objects (the deployed config read back from a pod is the text rendered
        before). Only an object of the very same type matches (a ``str`` subclass's answers may be of its type);
        ``==`` of two ``str`` is a memory compare up to their first difference."""
        key = (id(obj), tag)
        hit = self._answers.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        found = self._equal(obj, tag) if by_value else None
        value = found[0] if found is not None else compute()
        with self._lock:
            if len(self._answers) >= self._keep:
                del self._answers[next(iter(self._answers))]
            self._answers[key] = (obj, value)
        return value

    def latest(self, tag: Hashable) -> tuple[object, _V] | None:
        """The object and answer stored last under ``tag``, if one is held."""
        return next(self._newest_first(tag), None)

    def _equal(self, obj: object, tag: Hashable) -> tuple[_V] | None:
        for other, value in self._newest_first(tag):
            if type(other) is type(obj) and other == obj:
                return (value,)
        return None

    def _newest_first(self, tag: Hashable) -> Iterator[tuple[object, _V]]:
        with self._lock:
            entries = list(self._answers.items())
        return (entry for (_, other_tag), entry in reversed(entries) if other_tag == tag)
