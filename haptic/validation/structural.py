"""Structural validation: proving a render valid from the last config that passed ``haproxy -c``.

When a new render differs from a config that ``haproxy -c`` accepted only in server lines whose
differences are runtime-eligible (address, port, weight, maintenance) and the new values are
syntactically sound (IP literals, ports in range, weights in range), the new config is valid by
construction: HAProxy's parser sees the same sections, keywords and references, with values of the
same kind. Auxiliary files must be identical, except map contents referenced only through string
``map*`` converters whose lines are well-formed (any key is accepted there; regex, IP or integer
matchers are not, since ``haproxy -c`` compiles their keys).

Anything else — a new line, a new backend, a hostname, an agent field, a map read as a regex —
returns a reason for running ``haproxy -c``. Pure: no I/O.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from haptic.core.text_cuts import BACKENDS, changed_pieces, cut
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.planner import plan
from haptic.dataplane.section_kinds import SECTION_KEYWORDS
from haptic.dataplane.server_model import server_words_to_model
from haptic.dataplane.tokenizer import tokenize_line

__all__ = ["StructuralVerdict", "structural_check"]

#: Server fields a structurally-proven change may touch (the runtime API sets exactly these).
_ALLOWED_FIELDS = frozenset({"address", "port", "weight", "maintenance"})
_REMOVABLE_FIELDS = frozenset({"weight", "maintenance"})
_HEADER = re.compile(
    r"[ \t]*(" + "|".join(re.escape(k) for k in sorted(SECTION_KEYWORDS, key=len, reverse=True)) + r")(?=[\s#]|$)"
)
#: Sections whose servers the runtime API updates (planning a backend alone needs nothing else).
_SERVER_SECTIONS = frozenset({"backend"})
#: ``map*`` converters that take any string key and return the value as a string.
_STRING_MAP_CONVERTERS = frozenset({"map", "map_str", "map_beg", "map_end", "map_sub", "map_dom", "map_dir"})
# Without a leading \b the regex engine scans for the literal "map" (50x faster over a big config); the word
# boundary is checked on each match (``_map_uses``).
_MAP_CALL = re.compile(r"(map(?:_\w+)?)\(([^,)]*)")
# Control characters other than tab would change how HAProxy splits a map file into lines and words.
_BAD_MAP_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class StructuralVerdict:
    """``proven`` when the new render is valid without ``haproxy -c``; else ``reason`` says why not."""

    proven: bool
    reason: str
    changed_servers: int = 0


_BLOCK = 256


def _refuse(reason: str) -> StructuralVerdict:
    return StructuralVerdict(False, reason)


def structural_check(
    passed_config: str, passed_aux: AuxFiles, config: str, aux: AuxFiles
) -> StructuralVerdict:
    """Whether ``config``/``aux`` is provably valid given that ``passed_config``/``passed_aux`` passed."""
    aux_reason = _aux_difference(passed_aux, aux, config)
    if aux_reason:
        return _refuse(aux_reason)
    # The pieces first: when they line up, equal line counts follow from the differing pieces' alone (two passes
    # over 4 MB less per change); the whole texts' line counts only when they do not.
    found = _by_pieces(passed_config, config) if _PIECES else None
    if found is None:
        if passed_config.count("\n") != config.count("\n"):
            return _refuse("the line count changed")
        found = _by_lines(cut(passed_config, "\n"), cut(config, "\n"), 0)
    if isinstance(found, StructuralVerdict):
        return found
    changed, old_text, new_text = found
    if changed:
        try:
            sync = plan(old_text, new_text)
        except ConfigParseError as exc:
            return _refuse(f"the changed sections do not parse alone: {exc}")
        if sync.reload_required:
            return _refuse("the change needs a reload")
        if not all(op.runtime and op.child_type == "server" for op in sync.operations):
            return _refuse("the change is not a runtime server update")
    count = len(changed)
    return StructuralVerdict(True, f"{count} server line(s) changed in runtime fields only", count)


def _by_lines(old_lines: list[str], new_lines: list[str], first: int) -> StructuralVerdict | tuple[
        list[int], str, str]:
    """The changed lines' indices (``first`` + index), all of them server lines, and the text of the sections
    holding them in both configs; or the verdict refusing the change."""
    changed: list[int] = []
    # Blocks of lines compared at once (C-speed list equality) before any line is looked at in Python.
    for block in range(0, len(old_lines), _BLOCK):
        if old_lines[block:block + _BLOCK] == new_lines[block:block + _BLOCK]:
            continue
        for index in range(block, min(block + _BLOCK, len(old_lines))):
            old, new = old_lines[index], new_lines[index]
            if old == new:
                continue
            reason = _server_line_difference(old, new, first + index + 1)
            if reason:
                return _refuse(reason)
            changed.append(index)
    if not changed:
        return [], "", ""
    # Every other line is byte-identical and a server line is never a section header, so the
    # sections are the same in both texts: planning just the touched ones is planning the whole.
    spans = _section_spans(old_lines, changed)
    if not spans:
        return _refuse("a changed server line is outside any section")
    old_text = "\n".join(line for start, end in spans for line in old_lines[start:end])
    new_text = "\n".join(line for start, end in spans for line in new_lines[start:end])
    return [first + index for index in changed], old_text, new_text


#: texts are compared a piece (a ``backend`` line to the next) at a time when they have as many (False: line by line)
_PIECES = True


def _by_pieces(passed: str, config: str) -> StructuralVerdict | tuple[list[int], str, str] | None:
    """``_by_lines`` over the pieces that differ only (a 4 MB config is not split into 130,000 lines to find ten
    changed ones; the changed lines' indices are within their pieces: only their count is used); None when the
    texts do not cut into as many pieces of as many lines each (then the texts' line counts differ, or the pieces
    do not line up)."""
    old_pieces, new_pieces = cut(passed, BACKENDS), cut(config, BACKENDS)
    if len(old_pieces) != len(new_pieces):
        return None
    differ = changed_pieces(old_pieces, new_pieces)
    if not differ:
        return [], "", ""
    if any(new_pieces[k].count("\n") != old_pieces[k].count("\n") for k in differ):
        return None
    changed: list[int] = []
    old_parts: list[str] = []
    new_parts: list[str] = []
    for k in differ:
        prefix = "" if k == 0 else "backend "
        old_lines, new_lines = (prefix + old_pieces[k]).split("\n"), (prefix + new_pieces[k]).split("\n")
        found = _by_lines(old_lines, new_lines, 0)
        if isinstance(found, StructuralVerdict):
            # A refusal names its line in the whole text: the newlines before the piece, counted only then (a
            # proven change needs no line numbers, and counting them is a pass over 4 MB per change).
            begin = sum(map(len, old_pieces[:k])) + len(BACKENDS) * k
            return _by_lines(old_lines, new_lines, passed.count("\n", 0, begin))
        changed.extend(found[0])
        old_parts.append(found[1])
        new_parts.append(found[2])
    return changed, "\n".join(old_parts), "\n".join(new_parts)


def _section_spans(lines: list[str], changed: list[int]) -> list[tuple[int, int]]:
    """The [start, end) line ranges of the sections holding the ``changed`` lines, in order."""
    spans: list[tuple[int, int]] = []
    for index in changed:
        if spans and spans[-1][0] <= index < spans[-1][1]:
            continue
        start = index
        while start >= 0 and not _HEADER.match(lines[start]):
            start -= 1
        if start < 0:
            return []
        end = index + 1
        while end < len(lines) and not _HEADER.match(lines[end]):
            end += 1
        if _HEADER.match(lines[start]).group(1) not in _SERVER_SECTIONS:  # type: ignore[union-attr]
            return []
        spans.append((start, end))
    return spans


def _server_line_difference(old: str, new: str, number: int) -> str:
    try:
        old_words = tokenize_line(old, number)
        new_words = tokenize_line(new, number)
    except ConfigParseError:
        return f"line {number} does not tokenize"
    if len(old_words) < 3 or len(new_words) < 3 or old_words[0] != "server" or new_words[0] != "server":
        return f"line {number} changed and is not a server line"
    if old_words[1] != new_words[1]:
        return f"line {number}: the server name changed"
    before = server_words_to_model(tuple(old_words))
    after = server_words_to_model(tuple(new_words))
    for key in sorted(before.keys() | after.keys()):
        if before.get(key) == after.get(key):
            continue
        if key not in _ALLOWED_FIELDS:
            return f"line {number}: server field {key!r} changed (not runtime-eligible)"
        if key not in after:
            # Without "disabled"/"weight" a server is simply enabled/of default weight; an address or
            # port cannot be dropped that way.
            if key in _REMOVABLE_FIELDS:
                continue
            return f"line {number}: server field {key!r} was removed"
        problem = _value_problem(key, after[key], before.get(key))
        if problem:
            return f"line {number}: {problem}"
    return ""


def _value_problem(key: str, value: Any, previous: Any) -> str:
    if key == "address":
        if not isinstance(value, str):
            return "the address is not a string"
        try:
            ipaddress.ip_address(value)
        except ValueError:
            return f"address {value!r} is not an IP literal (haproxy -c resolves names)"
        if "%" in value:
            return f"address {value!r} names an interface scope (haproxy -c resolves it)"
        return ""
    if key == "port":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
            return f"port {value!r} is not in 1-65535"
        return ""
    if key == "weight":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 256:
            return f"weight {value!r} is not in 0-256"
        return ""
    if key == "maintenance":
        if value not in ("enabled", "disabled"):
            return f"maintenance {value!r} is not enabled/disabled"
        return ""
    return f"server field {key!r} is not provable"  # pragma: no cover - _ALLOWED_FIELDS guards this


def _aux_difference(old: AuxFiles, new: AuxFiles, config: str) -> str:
    for kind in ("files", "certificates", "crt_lists"):
        if dict(getattr(old, kind)) != dict(getattr(new, kind)):
            return f"auxiliary {kind.replace('_', '-')} changed"
    if list(old.maps) != list(new.maps):
        return "the set of map files changed"
    changed = [name for name in new.maps if new.maps[name] != old.maps[name]]
    if not changed:
        return ""
    uses = _map_uses(config)
    for name in changed:
        base = posixpath.basename(name)
        converters = uses.get(base)
        if not converters:
            return f"map {name} changed and is not read through a string map converter"
        unsafe = sorted(c for c in converters if c not in _STRING_MAP_CONVERTERS)
        if unsafe:
            return f"map {name} changed and is read by {unsafe[0]} (haproxy -c compiles its keys)"
        if config.count(base) != sum(converters.values()):
            return f"map {name} changed and is referenced outside a map converter"
        for line_number, line in enumerate(new.maps[name].split("\n"), start=1):
            if _BAD_MAP_CHARS.search(line.rstrip("\r")):
                return f"map {name} line {line_number} holds a control character"
    return ""


def _map_uses(config: str) -> dict[str, dict[str, int]]:
    """Map file basename -> converter name -> number of calls, over the whole config."""
    uses: dict[str, dict[str, int]] = {}
    at = 0
    while (match := _MAP_CALL.search(config, at)) is not None:
        start = match.start()
        if start and (config[start - 1].isalnum() or config[start - 1] == "_"):
            at = start + 1  # inside a word: not a call (as ``\bmap`` would not match there)
            continue
        at = match.end()
        base = posixpath.basename(match.group(2).strip().strip("\"'"))
        per = uses.setdefault(base, {})
        per[match.group(1)] = per.get(match.group(1), 0) + 1
    return uses
