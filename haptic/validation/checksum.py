"""Content checksum over a rendered config and its auxiliary files."""

from __future__ import annotations

import hashlib

from haptic.core.event import known_digest
from haptic.dataplane.aux_files import AuxFiles


def content_checksum(config: str, aux: AuxFiles | None = None) -> str:
    """First 8 bytes of SHA-256 over the config and every aux file (kind, name, content; name order)."""
    raw = config.encode()
    digest = hashlib.sha256(raw)
    if aux is not None:
        # A render's checksum: the SHA-256 of its config alone is what the event logs record of the config
        # (``digest``), handed over rather than worked out again over 4 MB for every change (not for single files:
        # the memo keeps a few texts only).
        known_digest(config, digest.copy().hexdigest(), len(raw))
        for kind, files in (
            ("map", aux.maps),
            ("file", aux.files),
            ("cert", aux.certificates),
            ("crt-list", aux.crt_lists),
        ):
            for name in sorted(files):
                for part in (kind, name, files[name]):
                    digest.update(b"\0")
                    digest.update(part.encode())
    return digest.hexdigest()[:16]
