"""``cut(text, separator)``: ``text.split(separator)``, once per text object and separator.

A rendered config of 10,000 backends (4 MB) is cut at its ``backend`` lines by the structural check and by the
reader of the deployed config, one after the other, for every change: the second gets the first's pieces. The
lists are shared: callers only read them. Holds the last few texts (each entry holds its text, so that its id is
not reused meanwhile); safe from several threads.
"""

from __future__ import annotations

import threading

__all__ = ["BACKENDS", "cut"]

#: where a rendered config is cut into its backends (the structural check and the deployed-config reader share
#: these pieces only while both cut at the same separator)
BACKENDS = "\nbackend "

_CUTS: dict[tuple[int, str], tuple[str, list[str]]] = {}
_LOCK = threading.Lock()
_KEEP = 8  # two texts (the passed config and the new one), cut at lines and at backends


def cut(text: str, separator: str) -> list[str]:
    """The pieces of ``text`` between occurrences of ``separator`` (read-only: shared with other callers)."""
    key = (id(text), separator)
    hit = _CUTS.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    pieces = text.split(separator)
    with _LOCK:
        if len(_CUTS) >= _KEEP:
            del _CUTS[next(iter(_CUTS))]
        _CUTS[key] = (text, pieces)
    return pieces
