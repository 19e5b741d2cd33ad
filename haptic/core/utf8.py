"""UTF-8 of large texts a slice at a time: ``utf8_slices`` and ``utf8_size``.

A rendered config of 10,000 backends is 4 MB. Encoded whole it is a fresh 4 MB buffer per change whose first
touch (page faults) costs as much as hashing or compressing it; slices reuse the allocator's memory. Code points
are never split (slicing a ``str`` cuts between them), so the slices' encodings add up to the text's.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["SLICE", "utf8_size", "utf8_slices"]

#: characters encoded at a time
SLICE = 1 << 16


def utf8_slices(text: str) -> Iterator[bytes]:
    """``text.encode()`` in pieces of at most ``SLICE`` characters (nothing for an empty text)."""
    for at in range(0, len(text), SLICE):
        yield text[at:at + SLICE].encode()


def utf8_size(text: str) -> int:
    """``len(text.encode())`` without encoding an ASCII text (``isascii`` is O(1) on a ``str``)."""
    return len(text) if text.isascii() else sum(map(len, utf8_slices(text)))
