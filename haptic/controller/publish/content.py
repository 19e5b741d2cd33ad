"""How published content is stored: as is, or zstd-compressed and base64-encoded above a threshold."""

from __future__ import annotations

import base64

import zstandard


def utf8_size(text: str) -> int:
    """``len(text.encode())`` without encoding an ASCII text (a rendered config of 4 MB: ``isascii`` is O(1))."""
    return len(text) if text.isascii() else len(text.encode())


def encode_content(text: str, threshold: int) -> tuple[str, bool]:
    """The stored form of ``text``: as is, or zstd + base64 when longer than ``threshold`` bytes."""
    if threshold <= 0 or utf8_size(text) <= threshold:
        return text, False
    return base64.b64encode(zstandard.ZstdCompressor().compress(text.encode())).decode(), True


def decode_content(content: str, compressed: bool) -> str:
    if not compressed:
        return content
    return zstandard.ZstdDecompressor().decompress(base64.b64decode(content)).decode()
