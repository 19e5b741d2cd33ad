"""Parsing haproxy.cfg text into ordered sections and their children.

The parser is structural: it knows the section keywords, which directives are children (servers,
binds, ACLs, rule lists...) and which are plain attributes, but it does not validate every keyword
HAProxy knows; ``haproxy -c`` does that. Whitespace and comments never reach the result.
"""

from __future__ import annotations

import gc
import itertools
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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

    def __post_init__(self) -> None:
        self.by_key: dict[tuple[str, str | None], Section] = {s.key: s for s in self.sections}
        self.frontends: dict[str, Section] = {}
        self.backends: dict[str, Section] = {}
        self.listens: dict[str, Section] = {}
        self.defaults: list[Section] = []
        self.global_section: Section | None = None
        accessor = {"frontend": self.frontends, "backend": self.backends, "listen": self.listens}
        for section in self.sections:
            if section.kind == "global":
                self.global_section = section
            elif section.kind == "defaults":
                self.defaults.append(section)
            elif section.kind in accessor and section.name is not None:
                accessor[section.kind][section.name] = section

    def section(self, kind: str, name: str | None = None) -> Section | None:
        return self.by_key.get((kind, name))

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
    (``_Parser.parse_against``). Shared sections keep ``other``'s line numbers; treat both results as read-only.
    """
    try:
        reused = _Parser().parse_against(text, other)
        if reused is not None:
            return reused
        reuse = {s.source: s for s in other.sections if s.kind not in UNNAMED_SECTIONS}
        return _Parser().parse(text, reuse)
    except ConfigParseError:
        # A shared section keeps the other text's line numbers, which an error may cite: errors come from a
        # whole parse, as they would without reuse.
        return parse_config(text)


#: one section chunk of a parsed text: its section, its length, (unnamed defaults so far, last defaults) before it
_Chunk = tuple["Section", int, tuple[int, str | None]]


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
        # keys of sections taken from another parse: a repeated global section must not merge into one
        self.adopted: frozenset[tuple[str, str | None]] = frozenset()

    def parse_against(self, text: str, other: HAProxyConfig) -> HAProxyConfig | None:
        """``text`` parsed as ``other``'s text with one stretch changed: the chunks before and after the stretch
        that differs are ``other``'s (their sections shared, as ``parse_config_reusing`` shares equal ones), only the
        stretch is parsed. None when ``other`` cannot serve (no chunk record, preamble or first chunk changed)."""
        old, chunks = other.text, other.chunks
        if not chunks or not old or "\x00" in text:
            return None
        starts = list(itertools.accumulate((c[1] for c in chunks), initial=len(old) - sum(c[1] for c in chunks)))
        if len({id(c[0]) for c in chunks}) != len(chunks):
            return None  # a repeated global section: merged chunks are parsed whole
        same_start = _common_prefix(text, old)
        # Prefix chunks: those ending within the common prefix at a place that is a chunk boundary in ``text`` too.
        # Every chunk but the last of them ends where the next one's header line, wholly inside the prefix, begins.
        head = bisect_right(starts, same_start) - 1
        if head >= 1 and not self._boundary(text, starts[head]):
            head -= 1
        if head < 1:
            return None
        same_end = _common_suffix(text, old, min(len(text), len(old)) - starts[head])
        shift = len(text) - len(old)
        # Suffix chunks: those starting within the common suffix (after the prefix), a newline before them.
        tail = max(head, bisect_left(starts, len(old) - same_end))
        while tail < len(chunks) and text[starts[tail] + shift - 1] != "\n":
            tail += 1
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._splice(text, other, starts, head, tail, shift)
        except _Fallback:
            return None
        finally:
            if gc_was_enabled:
                gc.enable()

    @staticmethod
    def _boundary(text: str, at: int) -> bool:
        return at == len(text) or (text[at - 1] == "\n" and _FIRST_HEADER.match(text, at) is not None)

    def _splice(self, text: str, other: HAProxyConfig, starts: list[int], head: int, tail: int,
                shift: int) -> HAProxyConfig:
        chunks = other.chunks or []
        kept = chunks[:head]
        self.sections = [c[0] for c in kept]
        self.seen = {s.key: s for s in self.sections}
        self.adopted = frozenset(self.seen)
        self.chunks = list(kept)
        self.unnamed_defaults, self.last_defaults = chunks[head][2] if head < len(chunks) else other.final_state
        middle_begin, middle_end = starts[head], starts[tail] + shift
        bounds = [m.start() + 1 for m in _HEADER.finditer(text, middle_begin - 1, middle_end)]
        if middle_begin < middle_end and (not bounds or bounds[0] != middle_begin):
            raise _Fallback  # the stretch does not begin with a header line
        bounds.append(middle_end)
        number = 1 + text.count("\n", 0, middle_begin)
        reuse: dict[str, Section] | None = None
        for begin, end in itertools.pairwise(bounds):
            if reuse is None:
                reuse = {s.source: s for s in other.sections if s.kind not in UNNAMED_SECTIONS}
            chunk = text[begin:end]
            self._parse_chunk(chunk, number, reuse)
            number += chunk.count("\n")
        if tail < len(chunks):
            if (self.unnamed_defaults, self.last_defaults) != chunks[tail][2]:
                raise _Fallback  # the stretch changed what later sections inherit or are called
            for section, _, _ in chunks[tail:]:
                for clash_kind in _NAMESPACE_CLASHES.get(section.kind, (section.kind,)):
                    if (clash_kind, section.name) in self.seen:
                        raise _Fallback  # the whole parse reports it, on the later line
            self.sections.extend(c[0] for c in chunks[tail:])
            self.chunks.extend(chunks[tail:])
            self.unnamed_defaults, self.last_defaults = other.final_state
        return HAProxyConfig(self.sections, text, self.chunks, (self.unnamed_defaults, self.last_defaults))

    def parse(self, text: str, reuse: dict[str, Section]) -> HAProxyConfig:
        if "\x00" in text:
            raise ConfigParseError(text.count("\n", 0, text.index("\x00")) + 1, "NUL byte in configuration text")
        # A large config allocates hundreds of thousands of tuples and no cycles: the cyclic
        # collector would only rescan them over and over.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            starts = [match.start() + 1 for match in _HEADER.finditer(text)]
            if _FIRST_HEADER.match(text):
                starts.insert(0, 0)
            starts.append(len(text))
            self._parse_preamble(text[: starts[0]])
            number = 1 + text.count("\n", 0, starts[0])
            for begin, end in itertools.pairwise(starts):
                chunk = text[begin:end]
                self._parse_chunk(chunk, number, reuse)
                number += chunk.count("\n")
        finally:
            if gc_was_enabled:
                gc.enable()
        return HAProxyConfig(self.sections, text, self.chunks, (self.unnamed_defaults, self.last_defaults))

    @staticmethod
    def _parse_preamble(preamble: str) -> None:
        for number, raw in enumerate(preamble.split("\n"), 1):
            words = tokenize_line(raw, number)
            if not words:
                continue
            if raw[0] not in " \t" and not _column_zero_ok(words[0], {}):
                raise ConfigParseError(number, f"unknown section keyword '{words[0]}'")
            raise ConfigParseError(number, f"'{words[0]}' appears before any section keyword")

    def _parse_chunk(self, chunk: str, first_number: int, reuse: dict[str, Section]) -> None:
        header_end = chunk.find("\n")
        if header_end < 0:
            header_end = len(chunk)
        before = (self.unnamed_defaults, self.last_defaults)
        candidate = reuse.get(chunk)
        if candidate is not None and self._adopt(candidate):
            self.chunks.append((candidate, len(chunk), before))
            return
        section = self._open_section(tokenize_line(chunk[:header_end], first_number), first_number)
        self.chunks.append((section, len(chunk), before))
        candidate = reuse.get(chunk)
        if (
            candidate is not None
            and candidate.key == section.key
            and candidate.implicit_defaults == section.implicit_defaults
        ):
            self.sections[-1] = candidate
            self.seen[candidate.key] = candidate
            self.chunks[-1] = (candidate, len(chunk), before)
            return
        # A merged global section's source is all its chunks, so equal sources stay equal content.
        section.source += chunk
        body = chunk[header_end + 1 :]
        # One scan of the whole body decides whether any line needs the careful tokenizer.
        plain = not ("#" in body or '"' in body or "'" in body or "\\" in body)
        children = CHILDREN_BY_KIND.get(section.kind, {})
        directives = section.directives
        attributes = section.attributes
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
            if existing is not None and (kind, None) in self.adopted:
                raise _Fallback  # merging into a section another parse shares
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
