"""``gc_paused()``: the cyclic collector off while a large pass allocates many objects and no cycles worth it;
``promote_young()``: what such a pass kept, moved to the oldest generation at once (what ``gc_paused`` does when
the last holder ends, unless told otherwise).

A render or a parse of a 10,000-backend config allocates hundreds of thousands of objects next to large stores;
the collector would rescan them over and over. Renders and parses run in several threads at once (a controller's
render thread, the webhook's, the deployer's parse): the collector, which is process-wide, is back on (and
``on_resume`` run) only when the last of them ends, and only if it was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "promote_young"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


def promote_young() -> None:
    """What a large pass allocated (a render's journals, cached fragments and routes; a parse's sections, chunk
    lengths and indexes: mostly kept for the next one) goes straight to the oldest generation: the young
    collections would move it there one by one after scanning it all (a 10,000-element list is 10,000 visits
    at each, ms per endpoint change at 10,000 Ingresses); cycles in it are found by the next full collection.
    Not while someone else holds a freeze (the controller holds none; an embedding program may): unfreezing would
    release theirs, and joining it would keep the pass's cycles from ever being collected."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


@contextmanager
def gc_paused(on_resume: Callable[[], None] | None = promote_young) -> Iterator[None]:
    """The collector off for the block; ``on_resume`` runs (collector still off) before the last holder turns it
    back on: by default ``promote_young``, as every large pass keeps most of what it allocated for the next one
    (a pass that does not can pass None)."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                try:
                    if on_resume is not None:
                        on_resume()
                finally:
                    gc.enable()

