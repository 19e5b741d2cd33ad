"""The resources that publish a render's auxiliary files beside its ``HAProxyCfg``.

``HAProxyMapFile`` (``hpmap``), ``HAProxyGeneralFile`` (``hpgf``) and ``HAProxyCRTListFile`` (``hpcl``), one
per file, in the HAProxyCfg's namespace, labelled ``haproxy-haptic.org/runtime-config=<HAProxyCfg name>``
and owned by it (deleted with it). ``spec.checksum`` is ``sha256:<hex>`` of the file's content; content
above the publishing threshold is zstd-compressed and base64-encoded, as the HAProxyCfg's.

SSL certificates are not copied into resources of their own: they hold private keys, and the Secrets
they were rendered from stay the one place those live.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from pydantic import Field

from haptic.config.meta import CamelModel
from haptic.core.digests import sha256_hex

RUNTIME_CONFIG_LABEL = "haproxy-haptic.org/runtime-config"


class MapFileSpec(CamelModel):
    map_name: str = Field(min_length=1)
    path: str = Field(min_length=1)
    entries: str = ""
    checksum: str = Field(min_length=1)
    compressed: bool = False


class GeneralFileSpec(CamelModel):
    file_name: str = Field(min_length=1)
    path: str = Field(min_length=1)
    content: str = ""
    checksum: str = Field(min_length=1)
    compressed: bool = False


class CRTListFileSpec(CamelModel):
    list_name: str = Field(min_length=1)
    path: str = Field(min_length=1)
    entries: str = ""
    checksum: str = Field(min_length=1)
    compressed: bool = False


class AuxFileStatus(CamelModel):
    observed_generation: int | None = None


@dataclass(frozen=True)
class AuxKind:
    """How one kind of auxiliary file is published: its resource, its name prefix and its spec fields."""

    kind: str
    plural: str
    prefix: str
    name_field: str
    content_field: str
    group: str  # the HAProxyCfg status's ``auxiliaryFiles`` list


MAP_FILES = AuxKind("HAProxyMapFile", "haproxymapfiles", "haproxy-map-", "mapName", "entries", "mapFiles")
GENERAL_FILES = AuxKind("HAProxyGeneralFile", "haproxygeneralfiles", "haproxy-file-", "fileName", "content",
                        "generalFiles")
CRT_LIST_FILES = AuxKind("HAProxyCRTListFile", "haproxycrtlistfiles", "haproxy-crtlist-", "listName", "entries",
                         "crtListFiles")
AUX_KINDS = (MAP_FILES, GENERAL_FILES, CRT_LIST_FILES)

_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def aux_resource_name(kind: AuxKind, filename: str) -> str:
    """``haproxy-map-hosts`` for ``hosts.map``: the base name without extension, lowercased, every other
    character a ``-``. When that loses information (``a_b.map`` and ``a.b.map``), 8 hex digits of the
    file name's SHA-256 keep names apart; the result is a valid object name of at most 253 characters."""
    stem = filename.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    slug = _NOT_DNS.sub("-", stem.lower()).strip("-") or "file"
    if slug != stem:
        slug = f"{slug[:200]}-{hashlib.sha256(filename.encode()).hexdigest()[:8]}"
    return kind.prefix + slug


def content_checksum(content: str) -> str:
    return "sha256:" + sha256_hex(content)
