"""How published content is stored: as is, or zstd-compressed and base64-encoded above a threshold.

A large config is compressed as a run of zstd frames, one per block of its backends: the frames of the blocks a
change left as they were (the very same piece objects, ``text_cuts``) are the last publication's, so an endpoint
change compresses one block, not 4 MB. Concatenated frames are one zstd stream (RFC 8878: a decoder reads frame
after frame; ``zstd -d`` does), which ``decode_content`` (``haptic.core.zstd_frames``) reads frame by frame.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable

import zstandard

from haptic.core.identity import same_items
from haptic.core.text_cuts import BACKENDS, changed_pieces, cut
from haptic.core.utf8 import utf8_size, utf8_slices
from haptic.core.zstd_frames import decode_content

__all__ = ["decode_content", "encode_config", "encode_content"]

_LEVEL = 1

#: backends per frame: a frame of 256 backends (~100 KB) compresses as well as the whole text within a few per
#: cent, and is what an endpoint change recompresses
_BLOCK = 256


class _Frames:
    """The last publication's blocks (their pieces) and frames: the frames of the blocks that come again."""

    def __init__(self) -> None:
        self._blocks: list[tuple[list[str], bool, bytes]] = []
        self._pieces: list[str] = []  # the pieces the blocks were cut from
        self._lock = threading.Lock()

    def compress(self, text: str) -> bytes:
        pieces = cut(text, BACKENDS)
        with self._lock:
            earlier, earlier_pieces = self._blocks, self._pieces
        # the blocks holding no piece cut anew since the last publication are its blocks, without a look at them
        changed = changed_pieces(earlier_pieces, pieces)
        touched = None if changed is None else {k // _BLOCK for k in changed}
        blocks = []
        for index, start in enumerate(range(0, len(pieces), _BLOCK)):
            if touched is not None and index not in touched:
                blocks.append(earlier[index])
                continue
            block = pieces[start:start + _BLOCK]
            last = start + _BLOCK >= len(pieces)
            old = earlier[index] if index < len(earlier) else None
            if old is not None and old[1] == last and same_items(old[0], block):
                blocks.append(old)
                continue
            blocks.append((block, last, _frame(BACKENDS.join(block) + ("" if last else BACKENDS))))
        with self._lock:
            self._blocks, self._pieces = blocks, pieces
        return b"".join(frame for _, _, frame in blocks)


def _frame(text: str) -> bytes:
    """One zstd frame of ``text``, fed a slice at a time (``utf8_slices``: no buffer of the whole text), with its
    content size in the header, as a one-shot compression writes it. Level 1, not the default 3: on a rendered
    config (long runs of near-identical backends) it is a quarter faster and its output no larger."""
    compressor = zstandard.ZstdCompressor(level=_LEVEL).compressobj(size=utf8_size(text))
    parts = [compressor.compress(raw) for raw in utf8_slices(text)]
    parts.append(compressor.flush())
    return b"".join(parts)


_CONFIGS = _Frames()


def _stored(text: str, threshold: int, compress: Callable[[str], bytes]) -> tuple[str, bool]:
    if threshold <= 0 or utf8_size(text) <= threshold:
        return text, False
    return base64.b64encode(compress(text)).decode(), True


def encode_content(text: str, threshold: int) -> tuple[str, bool]:
    """The stored form of ``text``: as is, or zstd + base64 when longer than ``threshold`` bytes."""
    return _stored(text, threshold, _frame)


def encode_config(config: str, threshold: int) -> tuple[str, bool]:
    """``encode_content`` for the rendered config: a frame per block of backends, those of the blocks the last
    publication had kept (shared by the publishers of a process, as the simulator runs several replicas: another
    config in between costs a recompression, never a wrong frame, as only the very same pieces reuse one)."""
    return _stored(config, threshold, _CONFIGS.compress)

