"""Auxiliary files rendered beside ``haproxy.cfg``: maps, general files, certificates and crt-lists."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AuxFiles:
    """Filename → content for every kind of auxiliary file HAProxy reads."""

    maps: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    certificates: Mapping[str, str] = field(default_factory=dict)
    crt_lists: Mapping[str, str] = field(default_factory=dict)
