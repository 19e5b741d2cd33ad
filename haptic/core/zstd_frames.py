"""``decode_content(content, compressed)``: published content as text, a zstd stream (base64) of one frame or
several read one after the other (``read_frames``).

The published config is a frame per block of backends (``haptic.controller.publish.content``); python-zstandard's
one-shot ``decompress`` reads the first frame and drops the rest without a word, so every reader of published
content (the controller, the local stack, the cluster backend) goes through here. Pure: imports nothing of the
project.
"""

from __future__ import annotations

import base64

import zstandard

__all__ = ["decode_content", "read_frames"]


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


def decode_content(content: str, compressed: bool) -> str:
    """The text of stored ``content``: as is, or base64 of a zstd stream when ``compressed``."""
    if not compressed:
        return content
    return read_frames(base64.b64decode(content)).decode()
