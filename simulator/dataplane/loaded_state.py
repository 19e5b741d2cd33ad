"""What a fake pod's haproxy is running: the config it last loaded and what that loaded into memory.

The Dataplane API's config file and haproxy's memory differ between a write and the reload that
follows it, and runtime commands act on memory: a map is known by the identifier its config used,
with the entries its file had at load time (plus runtime edits); a certificate can be replaced at
runtime only if haproxy loaded it (from a ``bind ... crt`` or a crt-list) or was told about it
(``new ssl cert``) since the last reload.
"""

from __future__ import annotations

import posixpath
from typing import Any

from simulator.dataplane.config_document import ConfigDocument
from simulator.dataplane.config_files import LoadedFiles, loaded_files
from simulator.dataplane.storage import Storage, parse_map


class LoadedState:
    def __init__(self, document: ConfigDocument, storage: Storage, config_file: str) -> None:
        self.storage = storage
        self.config_file = config_file
        self.document = document
        self.files = LoadedFiles(())
        self.maps: dict[str, list[tuple[str, str]]] = {}  # identifier -> entries, in load order
        self.certificates: set[str] = set()
        self.server_states: dict[tuple[str, str], str] = {}  # admin states set at runtime
        #: servers added through the runtime API (``add server``), by (backend, name): their line, as
        #: the config would have it; a reload forgets them, as haproxy does
        self.dynamic_servers: dict[tuple[str, str], str] = {}
        self.load(document)

    def load(self, document: ConfigDocument) -> None:
        """haproxy (re)started on ``document``: memory is what the files hold now."""
        self.document = document
        self.files = loaded_files(document.body(), self.storage.read_file, posixpath.dirname(self.config_file))
        self.maps = {}
        for ref in self.files.refs:
            if ref.kind == "map" and ref.written not in self.maps:
                self.maps[ref.written] = parse_map(self.storage.read_file(ref.path) or "")
        self.certificates = set(self.files.certificate_identifiers())
        self.server_states = {}
        self.dynamic_servers = {}

    def map_path(self, identifier: str) -> str | None:
        """Where the file of a loaded map is (what ``force_sync`` writes)."""
        for ref in self.files.refs:
            if ref.kind == "map" and ref.written == identifier:
                return ref.path
        return None

    def map_identifier(self, name: str) -> str | None:
        """``#<id>`` (the runtime map's number) resolved to its identifier; other names as given."""
        if name.startswith("#"):
            ids = list(self.maps)
            number = name[1:]
            return ids[int(number)] if number.isdigit() and int(number) < len(ids) else None
        return name

    def map_listing(self, maps_dir: str, include_unmanaged: bool) -> list[dict[str, Any]]:
        """``show map`` as the API serves it: only maps loaded from the maps directory unless
        ``include_unmanaged`` (a map written relative to ``default-path`` is not "in" that
        directory for the API, which compares the path as haproxy names it)."""
        out = []
        line = {r.written: r.line for r in reversed(self.files.refs) if r.kind == "map"}
        maps_dir = maps_dir.rstrip("/")
        for number, identifier in enumerate(self.maps):
            managed = posixpath.dirname(identifier).startswith(maps_dir)
            if not (managed or include_unmanaged):
                continue
            item: dict[str, Any] = {
                "id": str(number),
                "file": identifier,
                "description": f"pattern loaded from file '{identifier}' used by map at file "
                               f"'{self.config_file}' line {line[identifier]}",
            }
            if managed:
                item["storage_name"] = posixpath.basename(identifier)
            out.append(item)
        return out

    def has_server(self, backend: str, name: str) -> bool:
        return (backend, name) in self.dynamic_servers or self.document.server_line(backend, name) is not None

    def server_lines(self, backend: str) -> list[str]:
        """The backend's servers in haproxy's memory: those it loaded, then those added at runtime."""
        added = [line for (b, _), line in self.dynamic_servers.items() if b == backend]
        return [*self.document.server_lines(backend), *added]

    def replace_server_line(self, backend: str, name: str, line: str) -> None:
        """A runtime change of one server, in memory (a dynamic one, or one loaded from the config)."""
        if (backend, name) in self.dynamic_servers:
            self.dynamic_servers[(backend, name)] = line
        else:
            self.document.replace_server_line(backend, name, line)
