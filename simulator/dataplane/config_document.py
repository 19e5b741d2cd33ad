"""The fake's haproxy.cfg: text kept as lines, with a lazy index of backend servers.

Edits are textual so that ``GET raw`` returns what was pushed (plus ``# _version``), and a server
replace touches one line — cheap even for 100,000-line configs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from haptic.dataplane.section_kinds import SECTION_KEYWORDS

VERSION_PREFIX = "# _version="


def strip_version_lines(text: str) -> list[str]:
    """The body's lines without any ``# _version=`` line (the API owns that line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line for line in lines if not line.startswith(VERSION_PREFIX)]


@dataclass
class ConfigDocument:
    lines: list[str]
    _servers: dict[tuple[str, str], int] | None = field(default=None, repr=False)
    _sections: dict[tuple[str, str], int] | None = field(default=None, repr=False)

    @classmethod
    def from_text(cls, text: str) -> ConfigDocument:
        document = cls(strip_version_lines(text))
        document._index()  # paid once per push, so that runtime server updates stay O(1)
        return document

    def copy(self) -> ConfigDocument:
        return ConfigDocument(list(self.lines))

    def render(self, version: int) -> str:
        body = "\n".join(self.lines)
        return f"{VERSION_PREFIX}{version}\n{body}\n" if body else f"{VERSION_PREFIX}{version}\n"

    def body(self) -> str:
        return "\n".join(self.lines) + "\n" if self.lines else ""

    def _index(self) -> None:
        servers: dict[tuple[str, str], int] = {}
        sections: dict[tuple[str, str], int] = {}
        kind, name = "", ""
        for number, line in enumerate(self.lines):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[0] in SECTION_KEYWORDS:
                kind, name = words[0], words[1] if len(words) > 1 else ""
                sections.setdefault((kind, name), number)
            elif words[0] == "server" and kind in ("backend", "listen") and len(words) > 1:
                servers.setdefault((name, words[1]), number)
        self._servers, self._sections = servers, sections

    def has_section(self, kind: str, name: str) -> bool:
        if self._sections is None:
            self._index()
        assert self._sections is not None
        return (kind, name) in self._sections

    def server_line(self, backend: str, server: str) -> str | None:
        number = self._server_number(backend, server)
        return None if number is None else self.lines[number]

    def replace_server_line(self, backend: str, server: str, new_line: str) -> None:
        number = self._server_number(backend, server)
        if number is None:
            raise KeyError((backend, server))
        old = self.lines[number]
        indent = old[: len(old) - len(old.lstrip())] or "  "
        self.lines[number] = indent + new_line.strip()

    def _server_number(self, backend: str, server: str) -> int | None:
        if self._servers is None:
            self._index()
        assert self._servers is not None
        return self._servers.get((backend, server))

    def references(self, name: str) -> bool:
        """Whether a non-comment line mentions ``name`` (the API refuses to delete such a file)."""
        return any(name in line for line in self.lines if not line.lstrip().startswith("#"))
