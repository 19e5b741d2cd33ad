"""Parsing haproxy.cfg text into ordered sections and their children.

The parser is structural: it knows the section keywords, which directives are children (servers,
binds, ACLs, rule lists...) and which are plain attributes, but it does not validate every keyword
HAProxy knows; ``haproxy -c`` does that. Whitespace and comments never reach the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.section_kinds import (
    ADDRESS_REQUIRED,
    CHILDREN_BY_KIND,
    COLUMN_ZERO_DIRECTIVES,
    NAMED_BY_ADDRESS,
    SECTION_KEYWORDS,
    UNNAMED_SECTIONS,
    Category,
)
from haptic.dataplane.server_model import is_server_keyword
from haptic.dataplane.tokenizer import tokenize_line

__all__ = ["ConfigParseError", "Directive", "HAProxyConfig", "Section", "parse_config"]


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
    signature: list[tuple[str, ...]] = field(default_factory=list, repr=False)

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

    def same_content(self, other: Section) -> bool:
        """Cheap whole-section equality: header and every directive's words, in order."""
        return self.header_args == other.header_args and self.signature == other.signature


@dataclass(eq=False)
class HAProxyConfig:
    """A parsed haproxy.cfg: sections in file order plus typed accessors."""

    sections: list[Section]

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
    return _Parser().parse(text)


class _Parser:
    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.seen: dict[tuple[str, str | None], Section] = {}
        self.unnamed_defaults = 0

    def parse(self, text: str) -> HAProxyConfig:
        if "\x00" in text:
            raise ConfigParseError(text[: text.index("\x00")].count("\n") + 1, "NUL byte in configuration text")
        section: Section | None = None
        children: dict[str, tuple[Category, str]] = {}
        for number, raw in enumerate(text.splitlines(), 1):
            words = tokenize_line(raw, number)
            if not words:
                continue
            keyword = words[0]
            if keyword in SECTION_KEYWORDS:
                section = self._open_section(words, number)
                children = CHILDREN_BY_KIND.get(section.kind, {})
                continue
            if section is None:
                raise ConfigParseError(number, f"'{keyword}' appears before any section keyword")
            if raw[0] not in " \t" and keyword not in COLUMN_ZERO_DIRECTIVES and keyword not in children:
                raise ConfigParseError(number, f"unknown section keyword '{keyword}'")
            frozen = tuple(words)
            directive = Directive(frozen, number)
            section.directives.append(directive)
            section.signature.append(frozen)
            if keyword == "declare" and len(words) > 1 and words[1] == "capture" and "capture" in children:
                section.rules.setdefault("capture", []).append(directive)
                continue
            kind = children.get(keyword)
            if kind is None:
                section.attributes.append(directive)
            elif kind[0] == "rule":
                section.rules.setdefault(kind[1], []).append(directive)
            elif kind[0] == "acl":
                if len(words) < 2:
                    raise ConfigParseError(number, "acl line without a name")
                section.acls.setdefault(words[1], []).append(directive)
            else:
                self._add_named(section, kind[1], directive)
        return HAProxyConfig(self.sections)

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


def _looks_like_server_keyword(word: str) -> bool:
    return is_server_keyword(word)
