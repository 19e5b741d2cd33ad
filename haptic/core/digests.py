"""``sha256_hex(text)``: the SHA-256 of a text's UTF-8, worked out once for a large text that comes again.

Every change of a 10,000-Ingress cluster publishes and deploys the render's maps (hosts, paths: ~800 KB), each
hashed for its published checksum and for the "nothing changed" test of every pod's sync, though an endpoint
change leaves them as they were: a map rendered again from reused fragments is the same text (often the very
object, else equal: one memory compare). Small texts are hashed every time, faster than a look-up.
"""

from __future__ import annotations

import hashlib

from haptic.core.identity import Recent

__all__ = ["sha256_hex"]

#: below this a text is hashed, not looked up
_LARGE = 1 << 16

#: the maps and files of the last few renders (each entry holds its text: no id reuse)
_KNOWN: Recent[str] = Recent(32)


def sha256_hex(text: str) -> str:
    """``hashlib.sha256(text.encode()).hexdigest()``."""
    if len(text) < _LARGE:
        return hashlib.sha256(text.encode()).hexdigest()
    return _KNOWN.answer(text, "sha256", lambda: hashlib.sha256(text.encode()).hexdigest(), by_value=True)
