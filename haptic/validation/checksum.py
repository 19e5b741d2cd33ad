"""Content checksum over a rendered config and its auxiliary files."""

from __future__ import annotations

import hashlib
from typing import Any

from haptic.core.event import known_digest
from haptic.dataplane.aux_files import AuxFiles

#: characters of a text encoded and hashed at a time
_STEP = 1 << 16


def _hash_text(digest: Any, text: str) -> int:
    """Feeds ``text``'s UTF-8 to ``digest`` a slice at a time; its size in bytes. The whole 4 MB config encoded at
    once is a fresh 4 MB buffer per change, and its first touch (page faults) cost as much as hashing it; the slices
    reuse the allocator's memory. (Code points are never split: the slices' encodings add up to the text's.)"""
    if len(text) <= _STEP:
        raw = text.encode()
        digest.update(raw)
        return len(raw)
    size = 0
    for at in range(0, len(text), _STEP):
        raw = text[at:at + _STEP].encode()
        digest.update(raw)
        size += len(raw)
    return size


def content_checksum(config: str, aux: AuxFiles | None = None) -> str:
    """First 8 bytes of SHA-256 over the config and every aux file (kind, name, content; name order)."""
    digest = hashlib.sha256()
    size = _hash_text(digest, config)
    if aux is not None:
        # A render's checksum: the SHA-256 of its config alone is what the event logs record of the config
        # (``digest``), handed over rather than worked out again over 4 MB for every change (not for single files:
        # the memo keeps a few texts only).
        known_digest(config, digest.copy().hexdigest(), size)
        for kind, files in (
            ("map", aux.maps),
            ("file", aux.files),
            ("cert", aux.certificates),
            ("crt-list", aux.crt_lists),
        ):
            for name in sorted(files):
                for part in (kind, name, files[name]):
                    digest.update(b"\0")
                    _hash_text(digest, part)
    return digest.hexdigest()[:16]
