"""``parse_map_entries`` reads a map file as haproxy does, on the fast path (ASCII text, ``str.split``) as on the
careful one (a regular expression of ASCII white space)."""

from __future__ import annotations

import random
import re

from haptic.dataplane.aux_files import parse_map_entries

_HAPROXY_SPACE = re.compile(r"[ \t\v\f\r]+")


def _as_haproxy_reads(content: str) -> list[tuple[str, str]]:
    entries = []
    for line in content.split("\n"):
        stripped = line.strip(" \t\v\f\r")
        if stripped and not stripped.startswith("#"):
            parts = _HAPROXY_SPACE.split(stripped, maxsplit=1)
            entries.append((parts[0], parts[1] if len(parts) > 1 else ""))
    return entries


def test_entries_are_split_at_ascii_white_space_only() -> None:
    rng = random.Random(11)
    atoms = ["a", "key", " ", "\t", "\v", "\f", "\r", "\n", "#", "\x1c", "\x1f", "\xa0", "é", "\u2028", "\x85",
             "v/x", "  "]
    for _ in range(5000):
        content = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 15)))
        assert parse_map_entries(content) == _as_haproxy_reads(content), repr(content)
    assert parse_map_entries("k\x1cv w\n") == [("k\x1cv", "w")], "\\x1c is no separator for haproxy"
