"""Content checksum over a rendered config and its auxiliary files."""

from __future__ import annotations

import hashlib

from haptic.dataplane.aux_files import AuxFiles


def content_checksum(config: str, aux: AuxFiles | None = None) -> str:
    """First 8 bytes of SHA-256 over the config and every aux file (kind, name, content; name order)."""
    digest = hashlib.sha256()
    digest.update(config.encode())
    if aux is not None:
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
