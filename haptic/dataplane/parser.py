"""Parsing haproxy.cfg text into ordered sections and their children.

The parser is structural: it knows the section keywords, which directives are children (servers,
binds, ACLs, rule lists...) and which are plain attributes, but it does not validate every keyword
HAProxy knows; ``haproxy -c`` does that. Whitespace and comments never reach the result.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol, TypeVar

from haptic.core.gc_pause import gc_paused
from haptic.core.overlays import overlaid
from haptic.core.text_cuts import BACKENDS, changed_pieces, cut
from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.section_kinds import (
    ADDRESS_REQUIRED,
    CHILDREN_BY_KIND,
    COLUMN_ZERO_DIRECTIVES,
    COLUMN_ZERO_PREFIXES,
    NAMED_BY_ADDRESS,
    PROXY_KINDS,
    SECTION_KEYWORDS,
    UNNAMED_SECTIONS,
    Category,
)
from haptic.dataplane.server_model import SERVER_KEYWORDS
from haptic.dataplane.tokenizer import tokenize_line

__all__ = ["ConfigParseError", "Directive", "HAProxyConfig", "Section", "parse_config", "parse_config_reusing"]


class Directive(NamedTuple):
    """One configuration line: its words (raw spelling, no comment) and its 1-based line number."""

    words: tuple[str, ...]
    line: int

    @property
    def keyword(self) -> str:
        return self.words[0]

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]

    @property
    def text(self) -> str:
        """The normalised line: words joined by single spaces."""
        return " ".join(self.words)

    def __repr__(self) -> str:
        return f"Directive({' '.join(_redacted(self.words))!r}, line={self.line})"


@dataclass(eq=False)
class Section:
    """A section: header, every directive in order, and the same directives sorted into children."""

    kind: str
    name: str | None
    line: int
    header_args: tuple[str, ...] = ()
    directives: list[Directive] = field(default_factory=list)
    attributes: list[Directive] = field(default_factory=list)
    named: dict[str, dict[str, Directive]] = field(default_factory=dict)
    acls: dict[str, list[Directive]] = field(default_factory=dict)
    rules: dict[str, list[Directive]] = field(default_factory=dict)
    source: str = field(default="", repr=False)
    # For a proxy without ``from``: the defaults section it inherits from (the last one before it).
    implicit_defaults: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.kind, self.name)

    @property
    def servers(self) -> dict[str, Directive]:
        return self.named.get("server", {})

    @property
    def server_templates(self) -> dict[str, Directive]:
        return self.named.get("server-template", {})

    @property
    def binds(self) -> dict[str, Directive]:
        return self.named.get("bind", {})

    def rule_list(self, child_type: str) -> list[Directive]:
        return self.rules.get(child_type, [])

    def __repr__(self) -> str:
        return f"Section({self.kind!r}, {self.name!r}, line={self.line}, directives={len(self.directives)})"

    @property
    def signature(self) -> list[tuple[str, ...]]:
        """Every directive's words in order."""
        return [d.words for d in self.directives]

    def same_content(self, other: Section) -> bool:
        """Whole-section equality: header and every directive's words, in order.

        Byte-identical source text is the fast path; otherwise (comments, whitespace) the words
        are compared.
        """
        if self.implicit_defaults != other.implicit_defaults:
            return False
        if self.source and self.source == other.source:
            return True
        return self.header_args == other.header_args and self.signature == other.signature


@dataclass(eq=False)
class HAProxyConfig:
    """A parsed haproxy.cfg: sections in file order plus typed accessors."""

    sections: list[Section]
    #: the text parsed and, per section chunk (header line to the next header), its section, its length and the
    #: parser's state before it: what lets the next parse of a similar text take unchanged stretches wholesale
    text: str = field(default="", repr=False)
    chunks: list[_Chunk] | None = field(default=None, repr=False)
    final_state: tuple[int, str | None] = field(default=(0, None), repr=False)
    #: no section spans several chunks (a repeated global section merges them): what ``parse_against`` needs
    mergeless: bool = field(default=False, repr=False)
    #: the chunks' lengths and newlines as lists of their own (the next ``parse_against`` takes runs of them as
    #: slices, not 10,000 tuples read one by one); the parser fills them, None (a config built otherwise): read
    #: from ``chunks`` when first needed
    lengths: list[int] | None = field(default=None, repr=False)
    newlines: list[int] | None = field(default=None, repr=False)

    #: (the config this one was parsed against, its sections that went, the sections parsed) when parsed against
    #: one (``_Parser.parse_against``): what ``by_key`` and ``by_source`` are worked out from
    origin: tuple[HAProxyConfig, list[Section], list[Section]] | None = field(default=None, repr=False)
    #: the chunk index each piece of ``text.split(BACKENDS)`` but the first begins at (``_Parser.parse_by_pieces``):
    #: worked out when first needed, and handed on to a config parsed piece-wise from this one (the same chunks)
    piece_marks: list[int] | None = field(default=None, repr=False)
    #: (the config this one was parsed piece-wise from, held weakly; the [start, end) positions of the sections
    #: parsed, every other position holding that config's very section): the planner compares those places only
    derived: tuple[weakref.ref[HAProxyConfig], tuple[tuple[int, int], ...]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        #: see ``by_source``: its answer once worked out, or what it is worked out from
        self.by_source_cache: dict[str, Section] | None = None
        self.by_source_from = self.origin
        origin, self.origin = self.origin, None
        if origin is not None:
            # one link back at most: a config parsed against one parsed against another... would otherwise keep
            # every earlier config (a whole text each) alive until something asked for ``by_source``
            origin[0].by_source_from = None
        # The sections by key: a dict shared along a line of configs parsed one against the other, and the keys
        # changed since it (None: gone), so that a one-backend change costs one backend, not a copy of 10,000
        # entries; ``find`` looks one up, ``by_key`` is the whole dict, worked out when asked.
        self._keys: dict[_Key, Section]
        self._changed_keys: dict[_Key, Section | None] = {}
        #: how many keys ``by_key`` holds
        self.key_count: int
        self._by_key: dict[_Key, Section] | None = None
        if origin is not None and not any(s.kind == "defaults" or s.kind in UNNAMED_SECTIONS
                                          for s in (*origin[1], *origin[2])):
            # named sections only changed, each name once (a clash is a parse error): the other's keys, less the
            # sections that went, plus those parsed
            other, gone, parsed = origin
            self._keys, changed, self.key_count = other._keys, dict(other._changed_keys), other.key_count
            for section in gone:
                if other.find(section.key) is section:
                    changed[section.key] = None
                    self.key_count -= 1
            for section in parsed:
                held = changed.get(section.key, _NO_KEY)
                if (self._keys.get(section.key) if held is _NO_KEY else held) is None:
                    self.key_count += 1  # a key the other config does not hold (or no longer)
                changed[section.key] = section
            self._changed_keys = changed
            if len(changed) > max(_FLATTEN, len(self._keys) >> 4):
                self._keys, self._changed_keys = self.by_key, {}
        else:
            self._keys = {s.key: s for s in self.sections}
            self.key_count = len(self._keys)

    def find(self, key: _Key) -> Section | None:
        """``by_key.get(key)``, without working out the whole dict."""
        found = self._changed_keys.get(key, _NO_KEY)
        return self._keys.get(key) if found is _NO_KEY else found

    @property
    def by_key(self) -> dict[_Key, Section]:
        """Every named section (and the unnamed ones under ``(kind, None)``) by ``(kind, name)``."""
        if self._by_key is None:
            self._by_key = overlaid((self._keys,), self._changed_keys) if self._changed_keys else self._keys
        return self._by_key

    # worked out once, when first asked (the planner needs none of them: a config parsed per change need not pay)
    @cached_property
    def _accessors(self) -> tuple[dict[str, Section], dict[str, Section], dict[str, Section], list[Section],
                                  Section | None]:
        frontends: dict[str, Section] = {}
        backends: dict[str, Section] = {}
        listens: dict[str, Section] = {}
        defaults: list[Section] = []
        global_section: Section | None = None
        accessor = {"frontend": frontends, "backend": backends, "listen": listens}
        for section in self.sections:
            if section.kind == "global":
                global_section = section
            elif section.kind == "defaults":
                defaults.append(section)
            elif section.kind in accessor and section.name is not None:
                accessor[section.kind][section.name] = section
        return frontends, backends, listens, defaults, global_section

    @property
    def frontends(self) -> dict[str, Section]:
        return self._accessors[0]

    @property
    def backends(self) -> dict[str, Section]:
        return self._accessors[1]

    @property
    def listens(self) -> dict[str, Section]:
        return self._accessors[2]

    @property
    def defaults(self) -> list[Section]:
        return self._accessors[3]

    @property
    def global_section(self) -> Section | None:
        return self._accessors[4]

    def section(self, kind: str, name: str | None = None) -> Section | None:
        return self.find((kind, name))

    def of_kind(self, kind: str) -> list[Section]:
        return [s for s in self.sections if s.kind == kind]


def parse_config(text: str) -> HAProxyConfig:
    """Parse haproxy.cfg text; raises ``ConfigParseError`` naming the offending line."""
    return _Parser().parse(text, {})


def parse_config_reusing(text: str, other: HAProxyConfig) -> HAProxyConfig:
    """Parse ``text``, taking unchanged sections from ``other`` instead of parsing them again.

    A section whose source text (header line to the next header) is byte-identical to one of
    ``other``'s is the same parse result, so it is shared, not re-parsed: planning a one-line change
    in a 100k-line config parses one section of the second text. When ``other`` records its text, the chunks
    before and after the one stretch where the texts differ are taken without even being looked at one by one
    (``_Parser.parse_against``); when both texts are cut at their ``backend`` lines (``text_cuts``, which the passes
    over a rendered config share), only the pieces that differ are looked at (``_Parser.parse_by_pieces``). Shared
    sections keep ``other``'s line numbers; treat both results as read-only.
    """
    try:
        reused = _Parser().parse_by_pieces(text, other)
        if reused is None:
            reused = _Parser().parse_against(text, other)
        if reused is not None:
            return reused
        return _Parser().parse(text, by_source(other))
    except ConfigParseError:
        # A shared section keeps the other text's line numbers, which an error may cite: errors come from a
        # whole parse, as they would without reuse.
        return parse_config(text)


_Key = tuple[str, str | None]

#: a key ``find`` answers from the shared dict (not among those changed since)
_NO_KEY: Any = object()

#: changed keys a config holds over its shared dict before it is given a dict of its own (at least; or a sixteenth)
_FLATTEN = 64


#: one section chunk of a parsed text: its section, its length, (unnamed defaults so far, last defaults) before it,
#: its newlines (what numbers the lines of a chunk parsed after a run taken wholesale, without counting the run's)
_Chunk = tuple["Section", int, tuple[int, str | None], int]


_LENGTH = operator.itemgetter(1)
_NEWLINES = operator.itemgetter(3)


def _outside(runs: list[tuple[int, int]], count: int) -> list[int]:
    """The indices below ``count`` in none of the [start, end) ``runs``."""
    found: list[int] = []
    at = 0
    for start, end in sorted(runs):
        found.extend(range(at, start))
        at = max(at, end)
    found.extend(range(at, count))
    return found


_K = TypeVar("_K", bound=Hashable)


def _patched(base: dict[_K, Section], gone: list[Section], parsed: list[Section],
             key: Callable[[Section], _K]) -> dict[_K, Section]:
    """A copy of ``base`` (sections by ``key``) less the sections that went (those still there as themselves),
    plus those parsed: the index of a config worked out from the one it was parsed against."""
    found = dict(base)
    for section in gone:
        if found.get(key(section)) is section:
            del found[key(section)]
    for section in parsed:
        found[key(section)] = section
    return found


def by_source(config: HAProxyConfig, depth: int = 0) -> dict[str, Section]:
    """``config``'s named sections by their source text (what a parse of a similar text takes unchanged), worked
    out once per config: from the config it was parsed against when known (a copy, less the sections that went,
    plus those parsed), so that a one-section change costs one section."""
    found = config.by_source_cache
    if found is not None:
        return found
    origin = config.by_source_from
    if origin is not None and depth < 4:
        other, gone, parsed = origin
        found = _patched(by_source(other, depth + 1), gone,
                         [s for s in parsed if s.kind not in UNNAMED_SECTIONS], operator.attrgetter("source"))
    else:
        found = {s.source: s for s in config.sections if s.kind not in UNNAMED_SECTIONS}
    config.by_source_cache, config.by_source_from = found, None
    return found


_STARTS_BACKEND = operator.methodcaller("startswith", BACKENDS[1:])
_SECTION = operator.itemgetter(0)
_SOURCE = operator.attrgetter("source")


def _piece_marks(config: HAProxyConfig) -> list[int]:
    """The chunk index each piece of ``config.text.split(BACKENDS)`` but the first begins at: every ``backend`` line
    at column 0 opens a chunk (it is a section header), and a chunk whose source begins so is one unless it opens
    the text (no newline before it)."""
    marks = config.piece_marks
    if marks is None:
        chunks = config.chunks or []
        marks = list(itertools.compress(itertools.count(), map(_STARTS_BACKEND, map(_SOURCE, map(_SECTION, chunks)))))
        if marks and marks[0] == 0 and config.text.startswith(BACKENDS[1:]):
            del marks[0]
        config.piece_marks = marks
    return marks


#: configs whose lists a piece-wise parse took over (``_recycled``): what tests read
recycled = 0

#: reference counts are exact under the GIL (a free-threaded build splits them between threads): nothing is taken
#: over without it
_EXACT_COUNTS: bool = getattr(sys, "_is_gil_enabled", lambda: True)()

_Lists = tuple[list["Section"], list[_Chunk], list[int], list[int]]


def _recycled(other: HAProxyConfig) -> _Lists | None:
    """The lists of the config ``other`` was parsed piece-wise from, brought up to ``other``'s, when nothing holds
    that config but ``other``'s link to it: the config parsed now cuts that link, and the config would go, freeing
    10,000 entries of each list while this parse copied as many of ``other``'s; taken over, an endpoint change pays
    for neither. CPython's reference counts tell it exactly (the link, the local name, the argument of
    ``getrefcount``); anything else holding the config or one of its lists (a pod's cached parse, a caller) leaves
    them where they are: None, and the caller copies. The config is left empty (it is gone once the link is cut)."""
    global recycled
    origin, derived = other.by_source_from, other.derived
    if not _EXACT_COUNTS or origin is None or derived is None:
        return None
    if other.chunks is None or other.lengths is None or other.newlines is None:
        return None
    earlier = origin[0]
    if derived[0]() is not earlier or sys.getrefcount(earlier) != 3:
        return None
    sections, chunks, lengths, newlines = earlier.sections, earlier.chunks, earlier.lengths, earlier.newlines
    if chunks is None or lengths is None or newlines is None or not (
            sys.getrefcount(sections) == sys.getrefcount(chunks) == sys.getrefcount(lengths)
            == sys.getrefcount(newlines) == 3):
        return None
    for start, end in derived[1]:
        sections[start:end] = other.sections[start:end]
        chunks[start:end] = other.chunks[start:end]
        lengths[start:end] = other.lengths[start:end]
        newlines[start:end] = other.newlines[start:end]
    earlier.sections, earlier.chunks, earlier.lengths, earlier.newlines = [], None, None, None
    earlier.mergeless = False
    recycled += 1
    return sections, chunks, lengths, newlines


class _Reuse(Protocol):
    """Where a parse finds a section equal to a chunk of text (its source), to take it as it is."""

    def get(self, chunk: str, /) -> Section | None: ...


class _SameSource:
    """``by_source(other).get`` without building that index of 10,000 sources per change: a section's source begins
    with its header line, so a chunk equal to one of ``other``'s named sections names it in its first two words; a
    hit is checked against the whole source. A header those words misread (quotes, an unnamed ``defaults``) finds
    nothing, and its chunk is parsed, as any changed one is."""

    def __init__(self, other: HAProxyConfig) -> None:
        self._find = other.find
        self._last: tuple[str, Section | None] | None = None  # a parsed chunk is asked for before and after

    def get(self, chunk: str, /) -> Section | None:
        if self._last is not None and self._last[0] is chunk:
            return self._last[1]
        end = chunk.find("\n")
        words = chunk[:end if end >= 0 else len(chunk)].split(None, 2)
        found = self._find((words[0], words[1])) if len(words) > 1 and words[0] not in UNNAMED_SECTIONS else None
        answer = found if found is not None and found.source == chunk else None
        self._last = (chunk, answer)
        return answer


class _Fallback(Exception):
    """The stretch-wise parse met what only a whole parse decides (a merged section, a name clash)."""


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (a binary search of C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix, at most ``limit``."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[len(b) - mid: len(b) - lo], 0, len(a) - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


# The start of every section: a section keyword first on its line. Chunking the text with one
# regular expression is what lets unchanged sections be recognised before any tokenising.
_KEYWORDS_RE = "|".join(re.escape(k) for k in sorted(SECTION_KEYWORDS, key=len, reverse=True))
# Anchoring on a literal newline rather than ``^`` lets the regex engine skip ahead quickly.
_HEADER = re.compile(r"\n[ \t]*(?:" + _KEYWORDS_RE + r")(?=[\s#]|$)")
_FIRST_HEADER = re.compile(r"[ \t]*(?:" + _KEYWORDS_RE + r")(?=[\s#]|$)")


class _Parser:
    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.seen: dict[tuple[str, str | None], Section] = {}
        self.unnamed_defaults = 0
        self.last_defaults: str | None = None
        self.chunks: list[_Chunk] = []
        self.lengths: list[int] = []
        self.newlines: list[int] = []
        # equal lines share one words tuple (and its strings): three in four lines of the Ingress library's config
        # repeat another's (``mode http``, the disabled slots' servers); shared, a parse of 10,000 Ingresses' config
        # holds 37 MiB instead of 60 (tracemalloc), for 3 % more parse time
        self.words: dict[tuple[str, ...], tuple[str, ...]] = {}

    def parse_against(self, text: str, other: HAProxyConfig) -> HAProxyConfig | None:
        """``text`` parsed as ``other``'s text with some stretches changed: runs of ``other``'s chunks found again
        in order are taken wholesale (their sections shared, as ``parse_config_reusing`` shares equal ones; one
        comparison per run, not per chunk), only the chunks between runs are parsed. None when ``other`` cannot
        serve (no chunk record, merged sections, another preamble)."""
        old, chunks = other.text, other.chunks
        if not chunks or not old or "\x00" in text or not other.mergeless:
            return None
        if other.lengths is None or other.newlines is None:
            other.lengths, other.newlines = list(map(_LENGTH, chunks)), list(map(_NEWLINES, chunks))
        lengths = other.lengths
        starts = list(itertools.accumulate(lengths, initial=len(old) - sum(lengths)))
        if not text.startswith(old[:starts[0]]) or not self._boundary(text, starts[0]):
            return None
        try:
            with gc_paused():
                return self._walk(text, other, starts)
        except _Fallback:
            return None

    def parse_by_pieces(self, text: str, other: HAProxyConfig) -> HAProxyConfig | None:
        """``text`` parsed as ``other``'s text with some of its pieces (``text_cuts.cut`` at ``backend`` lines) changed:
        a piece is a run of whole chunks, so the chunks of the pieces the two cuts share (the very same objects, or
        equal ones) are ``other``'s, and only those of the differing pieces are parsed, in place. An endpoint change
        among 10,000 backends parses ten of them and walks nothing: the cuts are the ones the structural check and
        the config reader made of both texts. None when the pieces do not line up one for one in as many chunks
        each, the first piece (the sections before the first backend) changed, or what the parsed chunks leave
        (defaults in force, a name taken) differs from ``other``'s: ``parse_against`` then walks the texts."""
        chunks, lengths, newlines, old = other.chunks, other.lengths, other.newlines, other.text
        if not chunks or not old or not other.mergeless or lengths is None or newlines is None:
            return None
        old_pieces, new_pieces = cut(old, BACKENDS), cut(text, BACKENDS)
        last = len(old_pieces) - 1
        if last < 1 or len(new_pieces) != last + 1:
            return None
        differ = changed_pieces(old_pieces, new_pieces)
        if not differ or differ[0] == 0:
            return None
        marks = _piece_marks(other)
        if len(marks) != last:
            return None
        try:
            with gc_paused():
                return self._pieces(text, other, old_pieces[0], new_pieces, differ, marks)
        except _Fallback:
            return None

    def _pieces(self, text: str, other: HAProxyConfig, head: str, new_pieces: list[str], differ: list[int],
                marks: list[int]) -> HAProxyConfig:
        old, chunks = other.text, other.chunks or []
        lengths, newlines = other.lengths or [], other.newlines or []
        last = len(marks)
        reuse = _SameSource(other)
        # the line the chunk ``at`` opens, in ``text``: the preamble's lines first (the first piece less its chunks)
        line = 1 + old.count("\n", 0, len(head) + 1 - sum(lengths[:marks[0]]))
        at = 0
        spans: list[tuple[int, int]] = []
        left: list[Section] = []
        for k in differ:
            a, b = marks[k - 1], marks[k] if k < last else len(chunks)
            span = BACKENDS[1:] + new_pieces[k] + ("\n" if k < last else "")
            if "\x00" in span:
                raise _Fallback
            line += sum(newlines[at:a])
            self.unnamed_defaults, self.last_defaults = chunks[a][2]
            first_section = len(self.sections)
            heads = [0, *(found.start() + 1 for found in _HEADER.finditer(span)), len(span)]
            if len(heads) - 1 != b - a:
                raise _Fallback
            for begin, end in itertools.pairwise(heads):
                self._parse_chunk(span[begin:end], line, reuse)
                line += self.chunks[-1][3]
            if len(self.sections) - first_section != b - a or (self.unnamed_defaults, self.last_defaults) != (
                    chunks[b][2] if b < len(chunks) else other.final_state):
                raise _Fallback  # a section merged into another, or the defaults in force after it differ
            left.extend(other.sections[a:b])
            spans.append((a, b))
            at = b
        parsed = self.sections
        self._check_seams(other, parsed, {id(s) for s in left})
        # Every check passed: the lists, then what this parse made in place of the spans it parsed (each span's
        # chunks, sections, lengths and newlines follow one another in the parser's own lists).
        lists = _recycled(other) or (list(other.sections), list(chunks), list(lengths), list(newlines))
        sections, new_chunks, new_lengths, new_newlines = lists
        at = 0
        for a, b in spans:
            sections[a:b] = self.sections[at:at + b - a]
            new_chunks[a:b] = self.chunks[at:at + b - a]
            new_lengths[a:b] = self.lengths[at:at + b - a]
            new_newlines[a:b] = self.newlines[at:at + b - a]
            at += b - a
        kept = {id(s) for s in parsed}
        return HAProxyConfig(sections, text, new_chunks, other.final_state, mergeless=len(kept) == len(parsed),
                             lengths=new_lengths, newlines=new_newlines,
                             origin=(other, [s for s in left if id(s) not in kept], parsed), piece_marks=marks,
                             derived=(weakref.ref(other), tuple(spans)))

    @staticmethod
    def _boundary(text: str, at: int) -> bool:
        return at == len(text) or (text[at - 1] == "\n" and _FIRST_HEADER.match(text, at) is not None)

    @staticmethod
    def _run(text: str, old: str, starts: list[int], i: int, p: int) -> int:
        """How many of the old chunks from ``i`` on appear, unchanged and in order, in ``text`` at ``p``, ending at
        a chunk boundary of ``text`` (galloping, then a binary search: the cost follows the run's length)."""
        count = len(starts) - 1 - i
        a = starts[i]

        def matches(done: int, m: int) -> bool:
            # chunks [done, m) of the run, the first ``done`` being known to match: each stretch is copied out of
            # ``old`` and compared once, not the whole run so far again at every step
            return text.startswith(old[starts[i + done]:starts[i + m]], p + starts[i + done] - a)

        if count <= 0 or not matches(0, 1):
            return 0
        good, step = 1, 2
        while step <= count and matches(good, step):
            good, step = step, step * 2
        bad = min(step, count + 1)
        while bad - good > 1:
            mid = (good + bad) // 2
            if matches(good, mid):
                good = mid
            else:
                bad = mid
        # Every matched chunk but the last ends where the next one's header line, matched too, begins.
        if not _Parser._boundary(text, p + starts[i + good] - a):
            good -= 1
        return good

    def _walk(self, text: str, other: HAProxyConfig, starts: list[int]) -> HAProxyConfig:
        old, chunks = other.text, other.chunks or []
        sections = other.sections
        lengths, newlines = other.lengths or [], other.newlines or []
        adopted: list[tuple[int, int]] = []  # runs of old chunk indices taken
        parsed: list[Section] = []  # sections of the chunks parsed here
        reuse = _SameSource(other)
        index_of: dict[int, int] | None = None  # id of an old section -> its chunk index
        i, p = 0, starts[0]
        line = 1 + text.count("\n", 0, p)  # the line ``p`` is on
        while p < len(text):
            run = self._run(text, old, starts, i, p) if i < len(chunks) else 0
            if run and (self.unnamed_defaults, self.last_defaults) == chunks[i][2]:
                self.sections.extend(sections[i:i + run])
                self.chunks.extend(chunks[i:i + run])
                self.lengths.extend(lengths[i:i + run])
                run_newlines = newlines[i:i + run]
                self.newlines.extend(run_newlines)
                line += sum(run_newlines)
                adopted.append((i, i + run))
                p += starts[i + run] - starts[i]
                i += run
                self.unnamed_defaults, self.last_defaults = chunks[i][2] if i < len(chunks) else other.final_state
                continue
            found = _HEADER.search(text, p)
            end = found.start() + 1 if found is not None else len(text)
            chunk = text[p:end]
            self._parse_chunk(chunk, line, reuse)
            parsed.append(self.chunks[-1][0])
            line += self.chunks[-1][3]
            equal = reuse.get(chunk)
            if equal is not None:
                # an old chunk found again out of step: the walk resumes after it (looked for near where the walk
                # stands first: a changed section shifts it by one)
                k = next((n for n in range(max(0, i - 4), min(len(chunks), i + 5)) if chunks[n][0] is equal), None)
                if k is None:
                    if index_of is None:
                        index_of = {id(c[0]): n for n, c in enumerate(chunks)}
                    k = index_of.get(id(equal))
                if k is not None:
                    i = k + 1
            elif i < len(chunks):
                i += 1  # most likely the old version of this chunk: the next run is tried after it
            p = end
        left = [chunks[k][0] for k in _outside(adopted, len(chunks))]  # the old sections not taken wholesale
        self._check_seams(other, parsed, {id(s) for s in left})
        kept = {id(s) for s in parsed}
        return HAProxyConfig(self.sections, text, self.chunks, (self.unnamed_defaults, self.last_defaults),
                             mergeless=len(kept) == len(parsed), lengths=self.lengths, newlines=self.newlines,
                             origin=(other, [s for s in left if id(s) not in kept], parsed))

    def _check_seams(self, other: HAProxyConfig, parsed: list[Section], left: set[int]) -> None:
        """What the runs taken wholesale were not checked for: a parsed section clashing with (or merging into)
        one of them, or the same section taken twice. The whole parse then decides, and reports the error.
        ``left``: ids of ``other``'s sections outside the runs (each of ``other``'s sections is in one chunk)."""

        def taken(section: Section) -> bool:
            return id(section) not in left

        keys: set[tuple[str, str | None]] = set()
        for section in parsed:
            if section.kind in UNNAMED_SECTIONS:
                if any(s.kind == section.kind and taken(s) for s in other.sections):
                    raise _Fallback
                continue
            if section.key in keys:
                raise _Fallback
            keys.add(section.key)
            for clash_kind in _NAMESPACE_CLASHES.get(section.kind, (section.kind,)):
                earlier = other.find((clash_kind, section.name))
                if earlier is not None and taken(earlier):
                    raise _Fallback

    def parse(self, text: str, reuse: dict[str, Section]) -> HAProxyConfig:
        if "\x00" in text:
            raise ConfigParseError(text.count("\n", 0, text.index("\x00")) + 1, "NUL byte in configuration text")
        # A large config allocates hundreds of thousands of tuples and no cycles: the cyclic
        # collector would only rescan them over and over.
        with gc_paused():
            starts = [match.start() + 1 for match in _HEADER.finditer(text)]
            if _FIRST_HEADER.match(text):
                starts.insert(0, 0)
            starts.append(len(text))
            self._parse_preamble(text[: starts[0]])
            number = 1 + text.count("\n", 0, starts[0])
            for begin, end in itertools.pairwise(starts):
                self._parse_chunk(text[begin:end], number, reuse)
                number += self.chunks[-1][3]
        return HAProxyConfig(self.sections, text, self.chunks, (self.unnamed_defaults, self.last_defaults),
                             mergeless=len(self.sections) == len(self.chunks), lengths=self.lengths,
                             newlines=self.newlines)

    @staticmethod
    def _parse_preamble(preamble: str) -> None:
        for number, raw in enumerate(preamble.split("\n"), 1):
            words = tokenize_line(raw, number)
            if not words:
                continue
            if raw[0] not in " \t" and not _column_zero_ok(words[0], {}):
                raise ConfigParseError(number, f"unknown section keyword '{words[0]}'")
            raise ConfigParseError(number, f"'{words[0]}' appears before any section keyword")

    def _parse_chunk(self, chunk: str, first_number: int, reuse: _Reuse) -> None:
        header_end = chunk.find("\n")
        if header_end < 0:
            header_end = len(chunk)
        before = (self.unnamed_defaults, self.last_defaults)
        newlines = chunk.count("\n")
        candidate = reuse.get(chunk)
        self.lengths.append(len(chunk))
        self.newlines.append(newlines)
        if candidate is not None and self._adopt(candidate):
            self.chunks.append((candidate, len(chunk), before, newlines))
            return
        section = self._open_section(tokenize_line(chunk[:header_end], first_number), first_number)
        self.chunks.append((section, len(chunk), before, newlines))
        candidate = reuse.get(chunk)
        if (
            candidate is not None
            and candidate.key == section.key
            and candidate.implicit_defaults == section.implicit_defaults
        ):
            self.sections[-1] = candidate
            self.seen[candidate.key] = candidate
            self.chunks[-1] = (candidate, len(chunk), before, newlines)
            return
        # A merged global section's source is all its chunks, so equal sources stay equal content.
        section.source += chunk
        body = chunk[header_end + 1 :]
        # One scan of the whole body decides whether any line needs the careful tokenizer.
        plain = not ("#" in body or '"' in body or "'" in body or "\\" in body)
        children = CHILDREN_BY_KIND.get(section.kind, {})
        directives = section.directives
        attributes = section.attributes
        shared_words = self.words
        servers: dict[str, Directive] = {}
        server_needs_address = section.kind in ADDRESS_REQUIRED["server"]
        if server_needs_address:
            servers = section.named.setdefault("server", {})
        number = first_number
        for raw in body.split("\n"):
            number += 1
            words = raw.split() if plain else tokenize_line(raw, number)
            if not words:
                continue
            keyword = words[0]
            if raw[0] not in " \t" and not _column_zero_ok(keyword, children):
                raise ConfigParseError(number, f"unknown section keyword '{keyword}'")
            frozen = tuple(words)
            frozen = shared_words.setdefault(frozen, frozen)
            # tuple.__new__ skips the namedtuple's Python-level constructor: this loop is the hot path.
            directive: Directive = _new_tuple(Directive, (frozen, number))
            directives.append(directive)
            if keyword == "server" and server_needs_address and len(frozen) > 2:
                if frozen[1] in servers or frozen[2] in SERVER_KEYWORDS:
                    self._add_named(section, "server", directive)  # raises the precise error
                servers[frozen[1]] = directive
                continue
            kind = children.get(keyword)
            if kind is None:
                if keyword == "declare" and len(words) > 1 and words[1] == "capture" and "capture" in children:
                    section.rules.setdefault("capture", []).append(directive)
                else:
                    attributes.append(directive)
            elif kind[0] == "rule":
                section.rules.setdefault(kind[1], []).append(directive)
            elif kind[0] == "acl":
                if len(words) < 2:
                    raise ConfigParseError(number, "acl line without a name")
                section.acls.setdefault(words[1], []).append(directive)
            else:
                self._add_named(section, kind[1], directive)
        if server_needs_address and not servers:
            del section.named["server"]

    def _adopt(self, candidate: Section) -> bool:
        """Takes an equal chunk's section as it is, without reading its header again, when nothing around it makes
        it another section here: not a defaults or global one (numbered, merged), the same defaults inherited, no
        name clash (``_open_section`` reports that)."""
        kind = candidate.kind
        if kind == "defaults" or kind in UNNAMED_SECTIONS:
            return False
        inherits = self.last_defaults if kind in PROXY_KINDS and "from" not in candidate.header_args else None
        if candidate.implicit_defaults != inherits:
            return False
        name = candidate.name
        seen = self.seen
        for clash_kind in _NAMESPACE_CLASHES.get(kind, (kind,)):
            if (clash_kind, name) in seen:
                return False
        seen[(kind, name)] = candidate
        self.sections.append(candidate)
        return True

    def _open_section(self, words: list[str], number: int) -> Section:
        kind = words[0]
        if kind in UNNAMED_SECTIONS:
            existing = self.seen.get((kind, None))
            if existing is not None:
                # HAProxy merges repeated global sections into one.
                return existing
            section = Section(kind, None, number, tuple(words[1:]))
        elif kind == "defaults":
            if len(words) > 1 and words[1] != "from":
                section = Section(kind, words[1], number, tuple(words[2:]))
            else:
                self.unnamed_defaults += 1
                section = Section(kind, f"unnamed_defaults_{self.unnamed_defaults}", number, tuple(words[1:]))
        else:
            if len(words) < 2:
                raise ConfigParseError(number, f"'{kind}' section without a name")
            section = Section(kind, words[1], number, tuple(words[2:]))
        for clash_kind in _NAMESPACE_CLASHES.get(kind, (kind,)):
            other = self.seen.get((clash_kind, section.name))
            if other is not None:
                raise ConfigParseError(
                    number, f"duplicate {kind} '{section.name}' (already defined as {clash_kind} on line {other.line})"
                )
        if kind == "defaults":
            self.last_defaults = section.name
        elif kind in PROXY_KINDS and "from" not in section.header_args:
            section.implicit_defaults = self.last_defaults
        self.seen[section.key] = section
        self.sections.append(section)
        return section

    @staticmethod
    def _add_named(section: Section, child_type: str, directive: Directive) -> None:
        words = directive.words
        number = directive.line
        if len(words) < 2:
            raise ConfigParseError(number, f"{child_type} line without a name in {section.kind} '{section.name}'")
        if child_type in NAMED_BY_ADDRESS:
            name = words[1]
            for i in range(2, len(words) - 1):
                if words[i] == "name":
                    name = words[i + 1]
                    break
        else:
            name = words[1]
            required = ADDRESS_REQUIRED.get(child_type)
            if required is not None and section.kind in required:
                address_at = 3 if child_type == "server-template" else 2
                if len(words) <= address_at or _looks_like_server_keyword(words[address_at]):
                    raise ConfigParseError(
                        number, f"{child_type} '{name}' in {section.kind} '{section.name}' has no address"
                    )
        bucket = section.named.setdefault(child_type, {})
        previous = bucket.get(name)
        if previous is not None:
            raise ConfigParseError(
                number,
                f"duplicate {child_type} '{name}' in {section.kind} '{section.name}' (first on line {previous.line})",
            )
        bucket[name] = directive


# Words after these keywords are secrets (userlist passwords, hashes): never shown in reprs.
_SECRET_KEYWORDS = frozenset({"password", "insecure-password"})


def _redacted(words: tuple[str, ...]) -> list[str]:
    out = list(words)
    for i in range(len(out) - 1):
        if out[i] in _SECRET_KEYWORDS:
            out[i + 1] = "<redacted>"
    return out


# Frontends and backends have separate namespaces; a listen section is both at once.
_NAMESPACE_CLASHES: dict[str, tuple[str, ...]] = {
    "frontend": ("frontend", "listen"),
    "backend": ("backend", "listen"),
    "listen": ("listen", "frontend", "backend"),
}


def _column_zero_ok(keyword: str, children: dict[str, tuple[Category, str]]) -> bool:
    # HAProxy ignores indentation, but an unknown word at column 0 is far more often a misspelt
    # section keyword than an unindented directive: reject it unless it is a known directive.
    return keyword in COLUMN_ZERO_DIRECTIVES or keyword in children or keyword.startswith(COLUMN_ZERO_PREFIXES)


def _looks_like_server_keyword(word: str) -> bool:
    return word in SERVER_KEYWORDS


_new_tuple: Any = tuple.__new__
