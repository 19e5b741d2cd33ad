"""Content checksum over a rendered config and its auxiliary files."""

from __future__ import annotations

import hashlib

from haptic.dataplane.aux_files import AuxFiles

#: (config, aux, checksum) of the last few checksums: one render is checksummed by the render check and by the
#: validation (the entries hold the objects: their ids are not reused meanwhile; neither is ever changed)
_LAST: list[tuple[str, AuxFiles | None, str]] = []


def content_checksum(config: str, aux: AuxFiles | None = None) -> str:
    """First 8 bytes of SHA-256 over the config and every aux file (kind, name, content; name order)."""
    for known, known_aux, checksum in _LAST:
        if known is config and known_aux is aux:
            return checksum
    checksum = _checksum(config, aux)
    _LAST[:] = [(config, aux, checksum), *_LAST[:3]]
    return checksum


def _checksum(config: str, aux: AuxFiles | None) -> str:
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
