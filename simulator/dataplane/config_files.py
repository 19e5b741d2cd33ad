"""The files a haproxy.cfg makes haproxy load, and the names haproxy knows them by.

haproxy refuses to start when a map, certificate, crt-list, CA/CRL file or error file it is told to
load is missing, so the fake refuses such a config even without a real haproxy. It also needs the
identifiers haproxy gives what it loaded: a map or certificate is known at runtime by the path
*as written* in the config (``maps/host.map`` under ``default-path origin /etc/haproxy`` is not
``/etc/haproxy/maps/host.map`` for ``add map``; haproxy answers "Unknown map identifier"), and a
certificate loaded through a crt-list by the path written in the crt-list.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.tokenizer import tokenize_line, unquote

__all__ = ["FileRef", "LoadedFiles", "loaded_files"]

_MAP_CONVERTER = re.compile(r"(?<![\w-])map(?:_\w+)?\(([^,)\s]+)")
_MAP_ACTION = re.compile(r"(?<![\w-])(?:set|del)-map\(([^)\s]+)\)")
# bind/server parameters naming a file, and what haproxy calls it in its error message.
_FILE_PARAMS = {"crt": "certificate", "crt-list": "crt-list", "ca-file": "CA file", "crl-file": "CRL file"}


@dataclass(frozen=True)
class FileRef:
    kind: str  # "map", "certificate", "crt-list", "CA file", "CRL file", "error file", "pattern file"
    written: str  # as the config (or the crt-list) spells it: haproxy's runtime identifier
    path: str  # resolved against default-path / crt-base, where the file must be
    line: int  # 1-based line of the config that refers to it


@dataclass(frozen=True)
class LoadedFiles:
    refs: tuple[FileRef, ...]

    def map_identifiers(self) -> frozenset[str]:
        return frozenset(r.written for r in self.refs if r.kind == "map")

    def certificate_identifiers(self) -> frozenset[str]:
        return frozenset(r.written for r in self.refs if r.kind == "certificate")

    def missing(self, exists: Callable[[str], bool], under: str) -> list[FileRef]:
        """References below ``under`` (the part of the pod's filesystem the fake knows) to files that
        do not exist; files elsewhere belong to the image and are assumed present."""
        root = under.rstrip("/") + "/"
        return [r for r in self.refs if r.path.startswith(root) and not exists(r.path)]


def _resolve(written: str, base: str) -> str:
    return posixpath.normpath(written if written.startswith("/") else posixpath.join(base, written))


def loaded_files(text: str, read: Callable[[str], str | None], config_dir: str = "/etc/haproxy") -> LoadedFiles:
    """The files ``text`` makes haproxy load; ``read`` gives a pod file's content (crt-lists)."""
    scan = _scan(text, config_dir)
    refs: list[FileRef] = []
    for ref in scan.refs:
        refs.append(ref)
        if ref.kind == "crt-list":
            for entry in (read(ref.path) or "").split("\n"):
                entry_words = _words(entry)
                if entry_words:
                    written = unquote(entry_words[0])
                    refs.append(FileRef("certificate", written, _resolve(written, scan.crt_origin), ref.line))
    return LoadedFiles(tuple(refs))


@dataclass(frozen=True)
class _Scan:
    refs: tuple[FileRef, ...]  # what the text names; a crt-list's certificates follow it, read per pod
    crt_origin: str  # where a crt-list's relative certificate paths resolve


# A fleet loads one config on every pod, and scanning 3,000 Ingresses' config costs ~0.4 s: the text's
# part of the answer is kept for the last few texts (the crt-lists' content is read per pod, every time).
@functools.lru_cache(maxsize=4)
def _scan(text: str, config_dir: str) -> _Scan:
    return _scan_text(text, config_dir)


# A line can name a file or set a base directory only if it holds one of these: the tokenizer's words are
# pieces of the line as written, so a line without them has no word the scan looks for (most of a big config:
# 30,000 server lines).
_MAY_NAME_A_FILE = re.compile(r"map|errorfile|-f|crt|ca-|crl-file|default-path")


def _scan_text(text: str, config_dir: str) -> _Scan:
    may = _MAY_NAME_A_FILE.search
    candidates = [(number, words) for number, raw in enumerate(text.split("\n"), start=1)
                  if may(raw) and (words := _words(raw))]
    origin, crt_base, ca_base = config_dir, "", ""
    for _, words in candidates:
        if len(words) >= 2 and words[0] == "default-path":
            origin = unquote(words[2]) if words[1] == "origin" and len(words) > 2 else config_dir
        elif len(words) >= 2 and words[0] == "crt-base":
            crt_base = unquote(words[1])
        elif len(words) >= 2 and words[0] == "ca-base":
            ca_base = unquote(words[1])
    refs: list[FileRef] = []

    def add(kind: str, written: str, number: int, base: str = "") -> None:
        resolved = _resolve(written, posixpath.join(origin, base) if base else origin)
        refs.append(FileRef(kind, written, resolved, number))

    for number, words in candidates:
        body = " ".join(words)
        for pattern in (_MAP_CONVERTER, _MAP_ACTION):
            for match in pattern.finditer(body):
                add("map", unquote(match.group(1)), number)
        if words[0] == "errorfile" and len(words) >= 3:
            add("error file", unquote(words[2]), number)
        for i, word in enumerate(words[:-1]):
            if word == "-f":  # an ACL's pattern file
                add("pattern file", unquote(words[i + 1]), number)
        if words[0] not in ("bind", "server", "default-server"):
            continue
        for i, word in enumerate(words[:-1]):
            kind = _FILE_PARAMS.get(word)
            if kind is None:
                continue
            written = unquote(words[i + 1])
            base = crt_base if word in ("crt", "crt-list") else ca_base if word in ("ca-file", "crl-file") else ""
            add(kind, written, number, base)
    crt_origin = posixpath.join(origin, crt_base) if crt_base else origin
    return _Scan(tuple(refs), crt_origin)


def _words(raw: str) -> list[str]:
    try:
        return tokenize_line(raw, 0)
    except ConfigParseError:
        return raw.split()
