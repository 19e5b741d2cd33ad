"""``cut(text, separator)``: ``text.split(separator)``, once per text object and separator.

A rendered config of 10,000 backends (4 MB) is cut at its ``backend`` lines by the structural check and by the
reader of the deployed config, one after the other, for every change: the second gets the first's pieces. The
deployed config read back from a pod is the text rendered before as another object: it gets that text's pieces. The
lists are shared: callers only read them. Holds the last few texts (each entry holds its text, so that its id is
not reused meanwhile); safe from several threads.
"""

from __future__ import annotations

from haptic.core.identity import Recent

__all__ = ["BACKENDS", "cut"]

#: where a rendered config is cut into its backends (the structural check and the deployed-config reader share
#: these pieces only while both cut at the same separator)
BACKENDS = "\nbackend "

#: the texts of a change (the passed config, the new one, the deployed one read back), cut at lines and at backends
_CUTS: Recent[list[str]] = Recent(8)


def cut(text: str, separator: str) -> list[str]:
    """The pieces of ``text`` between occurrences of ``separator`` (read-only: shared with other callers)."""
    return _CUTS.answer(text, separator, lambda: text.split(separator), by_value=True)
