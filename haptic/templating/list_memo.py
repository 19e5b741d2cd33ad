"""``same_call``: a render's pass over a large list answered from the last call over the very same objects.

Store objects are replaced, never mutated, on change, and templates cannot change what they are given (the sandbox
is immutable): a pure function of the objects of a list (in order) and of a few plain arguments gives the same
answer for the same objects. A config change (a new engine over the same stores) or an EndpointSlice change then
redoes none of the passes over every Ingress that select, order and route them. The last few calls of each
name are kept (a template may call one pass over two lists, e.g. the isolated Ingresses and the others), for a
bounded number of names (names may carry a template's argument). Outside a render (a caller of its own,
whose objects may be its own to change) nothing is kept. Imports only the render context; never the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from haptic.core.identity import same_input, same_items
from haptic.templating.context import CURRENT_RENDER

__all__ = ["same_call"]

_R = TypeVar("_R")

#: name -> (the items of a call as given and as a tuple, its other arguments, its answer) for its last ``_CALLS``
#: calls, newest last;
#: names in the order last used
_LAST_CALLS: dict[str, list[tuple[Any, tuple[Any, ...], Any, Any]]] = {}
_CALLS, _NAMES = 4, 64


def same_call(name: str, items: Iterable[Any], args: Any, compute: Callable[[Sequence[Any]], _R]) -> _R:
    """``compute(items)`` (as a tuple), or the answer of the last call of ``name`` when its items were the very
    objects of ``items`` in the same order and its ``args`` equal these."""
    if CURRENT_RENDER.get() is None:
        return compute(tuple(items))
    calls = _LAST_CALLS.pop(name, [])
    _LAST_CALLS[name] = calls
    # the very list of an earlier call (a store's answer or a memo's, handed on), without a copy of 10,000
    for given, kept_items, other_args, kept in reversed(calls):
        if same_input(items, given, kept_items) and other_args == args:
            answer: _R = kept
            return answer
    group = tuple(items)
    for _, kept_items, other_args, kept in reversed(calls):
        if other_args == args and same_items(kept_items, group):
            answer = kept
            return answer
    answer = compute(group)
    calls.append((items, group, args, answer))
    del calls[:-_CALLS]
    while len(_LAST_CALLS) > _NAMES:
        del _LAST_CALLS[next(iter(_LAST_CALLS))]
    return answer
