"""``same_call``: a render's pass over a large list answered from the last call over the very same objects.

Store objects are replaced, never mutated, on change, and templates cannot change what they are given (the sandbox
is immutable): a pure function of the objects of a list (in order) and of a few plain arguments gives the same
answer for the same objects. A config change (a new engine over the same stores) or an EndpointSlice change then
redoes none of the passes over every Ingress that select, order and route them. Only the last call of each
function is kept; it holds its objects, so no id is reused meanwhile. Outside a render (a caller of its own,
whose objects may be its own to change) nothing is kept. Imports only the render context; never the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from haptic.core.identity import same_items
from haptic.templating.context import CURRENT_RENDER

__all__ = ["same_call"]

_R = TypeVar("_R")

#: function -> (the items of its last call, its other arguments, its answer)
_LAST_CALLS: dict[str, tuple[tuple[Any, ...], Any, Any]] = {}


def same_call(name: str, items: Iterable[Any], args: Any, compute: Callable[[Sequence[Any]], _R]) -> _R:
    """``compute(items)`` (as a tuple), or the answer of the last call of ``name`` when its items were the very
    objects of ``items`` in the same order and its ``args`` equal these."""
    group = tuple(items)
    if CURRENT_RENDER.get() is None:
        return compute(group)
    last = _LAST_CALLS.get(name)
    if last is not None and last[1] == args and same_items(last[0], group):
        answer: _R = last[2]
        return answer
    answer = compute(group)
    _LAST_CALLS[name] = (group, args, answer)
    return answer
