"""Auxiliary files deployed next to haproxy.cfg: maps, general files, SSL certificates, crt-lists.

The renderer produces an ``AuxFiles``; the synchronizer consumes it. Pure data, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


def _frozen(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(sorted(value.items())))


@dataclass(frozen=True)
class AuxFiles:
    """Filename -> content for each storage kind. Crt-lists are stored as general files."""

    maps: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    certificates: Mapping[str, str] = field(default_factory=dict)
    crt_lists: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("maps", "files", "certificates", "crt_lists"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def is_empty(self) -> bool:
        return not (self.maps or self.files or self.certificates or self.crt_lists)

    def general_files(self) -> dict[str, str]:
        """General files plus crt-lists: both go to general storage (the crt-list endpoint reloads)."""
        merged = dict(self.files)
        merged.update(self.crt_lists)
        return dict(sorted(merged.items()))

    def checksum(self) -> str:
        """A stable digest of every name and content, for the "nothing changed" fast path."""
        digest = hashlib.sha256()
        for kind in ("maps", "files", "certificates", "crt_lists"):
            for name, content in getattr(self, kind).items():
                for part in (kind, name, content):
                    digest.update(part.encode())
                    digest.update(b"\0")
        return digest.hexdigest()

    def __repr__(self) -> str:
        # Certificates hold private keys: the repr lists names only.
        return (
            f"AuxFiles(maps={list(self.maps)}, files={list(self.files)}, "
            f"certificates={list(self.certificates)}, crt_lists={list(self.crt_lists)})"
        )
