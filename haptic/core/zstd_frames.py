"""``read_frames(data)``: the bytes of a zstd stream of one frame or several, read one after the other.

The published config is a frame per block of backends (``haptic.controller.publish.content``); python-zstandard's
one-shot ``decompress`` reads the first frame and drops the rest without a word, so every reader of published
content goes through here. Pure: imports nothing of the project.
"""

from __future__ import annotations

import zstandard

__all__ = ["read_frames"]


def read_frames(data: bytes) -> bytes:
    """Every frame of ``data`` decompressed, in order; ``ZstdError`` if it ends inside one."""
    decompressor = zstandard.ZstdDecompressor()
    parts = []
    while data:
        frame = decompressor.decompressobj()
        parts.append(frame.decompress(data))
        if not frame.eof:
            raise zstandard.ZstdError("the stored content ends inside a zstd frame")
        data = frame.unused_data
    return b"".join(parts)
