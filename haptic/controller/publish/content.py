"""How published content is stored: as is, or zstd-compressed and base64-encoded above a threshold."""

from __future__ import annotations

import base64

import zstandard

#: characters encoded and compressed at a time
_STEP = 1 << 16


def utf8_size(text: str) -> int:
    """``len(text.encode())`` without encoding an ASCII text (a rendered config of 4 MB: ``isascii`` is O(1))."""
    return len(text) if text.isascii() else len(text.encode())


def encode_content(text: str, threshold: int) -> tuple[str, bool]:
    """The stored form of ``text``: as is, or zstd + base64 when longer than ``threshold`` bytes."""
    size = utf8_size(text)
    if threshold <= 0 or size <= threshold:
        return text, False
    # Fed a slice at a time (one frame, its content size in the header as a one-shot compression writes it): the
    # 4 MB config encoded whole was a fresh 4 MB buffer per publication, its page faults costing as much as zstd.
    compressor = zstandard.ZstdCompressor().compressobj(size=size)
    parts = [compressor.compress(text[at:at + _STEP].encode()) for at in range(0, len(text), _STEP)]
    parts.append(compressor.flush())
    return base64.b64encode(b"".join(parts)).decode(), True


def decode_content(content: str, compressed: bool) -> str:
    if not compressed:
        return content
    return zstandard.ZstdDecompressor().decompress(base64.b64decode(content)).decode()
