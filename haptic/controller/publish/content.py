"""How published content is stored: as is, or zstd-compressed and base64-encoded above a threshold."""

from __future__ import annotations

import base64

import zstandard

from haptic.core.utf8 import utf8_size, utf8_slices

_LEVEL = 1


def encode_content(text: str, threshold: int) -> tuple[str, bool]:
    """The stored form of ``text``: as is, or zstd + base64 when longer than ``threshold`` bytes."""
    size = utf8_size(text)
    if threshold <= 0 or size <= threshold:
        return text, False
    # Fed a slice at a time (``utf8_slices``: no 4 MB buffer per publication), into one frame with its content
    # size in the header, as a one-shot compression writes it.
    # Level 1, not the default 3: on a rendered config (long runs of near-identical backends) it is a quarter
    # faster and its output no larger; this runs for every published change.
    compressor = zstandard.ZstdCompressor(level=_LEVEL).compressobj(size=size)
    parts = [compressor.compress(raw) for raw in utf8_slices(text)]
    parts.append(compressor.flush())
    return base64.b64encode(b"".join(parts)).decode(), True


def decode_content(content: str, compressed: bool) -> str:
    if not compressed:
        return content
    return zstandard.ZstdDecompressor().decompress(base64.b64decode(content)).decode()
