"""How published content is stored: as is, or zstd-compressed and base64-encoded above a threshold."""

from __future__ import annotations

import base64

import zstandard


def encode_content(text: str, threshold: int) -> tuple[str, bool]:
    """The stored form of ``text``: as is, or zstd + base64 when longer than ``threshold`` bytes."""
    raw = text.encode()
    if threshold <= 0 or len(raw) <= threshold:
        return text, False
    return base64.b64encode(zstandard.ZstdCompressor().compress(raw)).decode(), True


def decode_content(content: str, compressed: bool) -> str:
    if not compressed:
        return content
    return zstandard.ZstdDecompressor().decompress(base64.b64decode(content)).decode()
