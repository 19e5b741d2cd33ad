"""The fake's haproxy.cfg: text kept as lines, with a lazy index of backend servers.

Edits are textual so that ``GET raw`` returns what was pushed (plus ``# _version``), and a server
replace touches one line — cheap even for 100,000-line configs.
"""

from __future__ import annotations

import functools
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
        known = _indexed(text)
        assert known._servers is not None and known._sections is not None
        # Each pod edits its own document: the lines and indexes are copied, never shared.
        return cls(list(known.lines), dict(known._servers), dict(known._sections))

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

    def section_lines(self, kind: str, name: str) -> list[str]:
        """The lines of one section after its header, up to the next section (empty when absent)."""
        if self._sections is None:
            self._index()
        assert self._sections is not None
        start = self._sections.get((kind, name))
        if start is None:
            return []
        out = []
        for line in self.lines[start + 1:]:
            words = line.split()
            if words and words[0] in SECTION_KEYWORDS and not line[:1].isspace():
                break
            out.append(line)
        return out

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

    def server_lines(self, backend: str) -> list[str]:
        if self._servers is None:
            self._index()
        assert self._servers is not None
        return [self.lines[n] for (b, _), n in sorted(self._servers.items(), key=lambda kv: kv[1]) if b == backend]

    def add_server_line(self, backend: str, line: str) -> None:
        """Appends a server to the end of ``backend`` (after its last non-blank line)."""
        if self._sections is None:
            self._index()
        assert self._sections is not None
        start = self._sections[("backend", backend)]
        end = start + 1
        for number in range(start + 1, len(self.lines)):
            words = self.lines[number].split()
            if words and words[0] in SECTION_KEYWORDS and not self.lines[number][:1].isspace():
                break
            if words:
                end = number + 1
        self.lines.insert(end, "  " + line.strip())
        self._servers = self._sections = None  # line numbers moved

    def delete_server_line(self, backend: str, server: str) -> None:
        number = self._server_number(backend, server)
        if number is None:
            raise KeyError((backend, server))
        del self.lines[number]
        self._servers = self._sections = None

    def _server_number(self, backend: str, server: str) -> int | None:
        if self._servers is None:
            self._index()
        assert self._servers is not None
        return self._servers.get((backend, server))

    def referencing_line(self, path: str) -> tuple[int, str] | None:
        """The first non-comment line containing ``path`` (1-based number, stripped) — the real API's
        (admittedly rough) test before it deletes a stored file: it looks for the file's full path, so
        a file the config names by a relative path does not count as referenced."""
        for number, line in enumerate(self.lines, start=1):
            if path in line and not line.lstrip().startswith("#"):
                return number, line.strip()
        return None


# A fleet is pushed one text on every pod: its lines are split and indexed once (the last few texts).
@functools.lru_cache(maxsize=4)
def _indexed(text: str) -> ConfigDocument:
    document = ConfigDocument(strip_version_lines(text))
    document._index()  # paid once per pushed text, so that runtime server updates stay O(1)
    return document
