"""The deployed ``haproxy.cfg`` as templates see it: backends and their servers, for slot preservation.

Read with ``haptic.dataplane``'s parser, the one the deployer plans with: a second, lighter reader
(``str.splitlines``) once split lines at U+2028 and the other Unicode line breaks, and so saw a
``server`` line that the Dataplane side (and HAProxy, which splits at ``\n`` only) never saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.parser import parse_config


@dataclass(frozen=True, slots=True)
class CurrentServer:
    name: str
    address: str
    port: int | None
    disabled: bool

    @property
    def endpoint(self) -> str:
        return self.address if self.port is None else f"{self.address}:{self.port}"


@dataclass(frozen=True)
class CurrentBackend:
    name: str
    servers: dict[str, CurrentServer] = field(default_factory=dict)


@dataclass(frozen=True)
class CurrentConfig:
    """The parsed deployed config: ``backends[name].servers[name].address/port/disabled``."""

    backends: dict[str, CurrentBackend]
    text: str = field(repr=False, default="")
    #: [the config this one was read after, the names whose backend object differs from it (added and removed
    #: included)] when the reader knows (``CurrentConfigCache``); emptied once a newer one is read (no chain)
    delta: list[Any] = field(default_factory=list, repr=False, compare=False)

    def backend(self, name: str) -> CurrentBackend | None:
        return self.backends.get(name)

    def changed_since(self, other: CurrentConfig | None) -> frozenset[str] | None:
        """The backend names whose object is not ``other``'s (None: unknown)."""
        if other is None or not self.delta or self.delta[0] is not other:
            return None
        changed: frozenset[str] = self.delta[1]
        return changed


def _split_address(value: str) -> tuple[str, int | None]:
    host, sep, port = value.rpartition(":")
    if sep and port.isdigit() and host:
        return host.strip("[]"), int(port)
    return value, None


def parse_current_config(text: str) -> CurrentConfig:
    """Backends and servers of ``text``; a config the parser refuses has none (no slot is preserved)."""
    try:
        parsed = parse_config(text)
    except ConfigParseError:
        return CurrentConfig({}, text)
    return _from_parsed(parsed, text)


@lru_cache(maxsize=4096)
def _server(name: str, address: str, port: int | None, disabled: bool) -> CurrentServer:
    """One object per distinct server (frozen: shared safely): 10,000 backends of ten slots repeat the same few
    disabled placeholders (``SRV_4 127.0.0.1:1 disabled``), four in five of their servers."""
    return CurrentServer(name, address, port, disabled)


def _from_parsed(parsed: Any, text: str = "") -> CurrentConfig:
    """Converts an already parsed config (``haptic.dataplane.HAProxyConfig``: ``of_kind("backend")``
    sections with ``name`` and ``servers`` → directives with ``words``) without reparsing text."""
    backends: dict[str, CurrentBackend] = {}
    for section in parsed.of_kind("backend"):
        backend = CurrentBackend(str(section.name))
        for name, directive in dict(section.servers).items():
            words = list(getattr(directive, "words", ()))
            if len(words) >= 3:
                address, port = _split_address(words[2])
                backend.servers[str(name)] = _server(str(name), address, port, "disabled" in words[3:])
        backends[backend.name] = backend
    return CurrentConfig(backends, text)


def coerce_current_config(value: Any) -> CurrentConfig | None:
    """Accepts ``None``, config text, a ``CurrentConfig``, a parsed ``haptic.dataplane.HAProxyConfig``
    or any object with the text as ``content``/``config``/``text`` (e.g. a ``HAProxyCfg`` via ``spec``)."""
    if value is None or isinstance(value, CurrentConfig):
        return value
    if callable(getattr(value, "of_kind", None)):
        return _from_parsed(value)
    if isinstance(value, str):
        return parse_current_config(value) if value and not value.isspace() else None
    for attribute in ("content", "config", "text"):
        text = getattr(value, attribute, None)
        if isinstance(text, str):
            return parse_current_config(text) if text and not text.isspace() else None
    spec = getattr(value, "spec", None)
    if spec is not None:
        return coerce_current_config(spec)
    raise TypeError(f"cannot read a deployed config from {type(value).__name__}")
