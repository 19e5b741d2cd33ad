"""Auxiliary files deployed next to haproxy.cfg: maps, general files, SSL certificates, crt-lists.

The renderer produces an ``AuxFiles``; the synchronizer consumes it. Pure data, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType

from haptic.core.digests import sha256_hex


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
        """A stable digest of every name and content, for the "nothing changed" fast path (worked out once per
        object: every pod's sync asks it of the same files)."""
        known = self.__dict__.get("_checksum")
        if known is None:
            known = self._digest()
            object.__setattr__(self, "_checksum", known)  # frozen: the files cannot change under it
        return str(known)

    def _digest(self) -> str:
        # each content by its own digest (``sha256_hex``: a large map that comes again is not hashed again)
        digest = hashlib.sha256()
        for kind in ("maps", "files", "certificates", "crt_lists"):
            for name, content in getattr(self, kind).items():
                for part in (kind, name, sha256_hex(content)):
                    digest.update(part.encode())
                    digest.update(b"\0")
        return digest.hexdigest()

    def __repr__(self) -> str:
        # Certificates hold private keys: the repr lists names only.
        return (
            f"AuxFiles(maps={list(self.maps)}, files={list(self.files)}, "
            f"certificates={list(self.certificates)}, crt_lists={list(self.crt_lists)})"
        )


_UNSAFE_NAME = re.compile(r"[^a-zA-Z0-9_\-]+")


def sanitize_storage_name(kind: str, name: str) -> str:
    """The name the Dataplane API stores a file under: unsafe runs in the base name and extension
    become ``_`` (so ``example.com.pem`` is stored as ``example_com.pem``); maps end in ``.map``."""
    base, dot, ext = PurePosixPath(name).name.rpartition(".")
    if not dot:
        base, ext = ext, ""
    clean = _UNSAFE_NAME.sub("_", base) + ("." + _UNSAFE_NAME.sub("_", ext) if ext else "")
    if kind == "maps" and not clean.endswith(".map"):
        clean += ".map"
    return clean


_ASCII_SPACE = " \t\v\f\r"
_SEPARATOR = re.compile(r"[ \t\v\f\r]+")


def parse_map_entries(content: str) -> list[tuple[str, str]]:
    """``key value`` lines of a map file, as haproxy reads them: lines end at ``\n`` only (not at
    the other characters ``str.splitlines`` breaks on), words are split by ASCII white space, blank
    and ``#`` lines are skipped, the value is the rest of the line."""
    entries = []
    # On ASCII text without the separators \x1c-\x1f, str.split() splits at exactly haproxy's white space (and
    # runs in C): the regular expression is for the rest.
    split = str.split if content.isascii() and not _OTHER_SPACE.search(content) else _split_ascii_space
    for line in content.split("\n"):
        stripped = line.strip(_ASCII_SPACE)
        if not stripped or stripped.startswith("#"):
            continue
        parts = split(stripped, None, 1)
        entries.append((parts[0], parts[1] if len(parts) > 1 else ""))
    return entries


_OTHER_SPACE = re.compile(r"[\x1c-\x1f]")


def _split_ascii_space(text: str, _: None, maxsplit: int) -> list[str]:
    return _SEPARATOR.split(text, maxsplit=maxsplit)
