"""Traffic checks through HAProxy: send requests, record which echo backend answered each one."""

from __future__ import annotations

import asyncio
import collections
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from haptic.core.tls import default_ssl_context

_SECTION = re.compile(r"^(global|defaults|frontend|backend|listen|resolvers|peers|userlist|program|"
                      r"http-errors|ring|cache|mailers|crt-store|traces)\b[ \t]*(\S*)", re.MULTILINE)
_PLAIN_BIND = re.compile(r"^[ \t]*bind[ \t]+(?:\*|0\.0\.0\.0|\[::\]|::)?:(\d+)(?P<rest>[^\n]*)$", re.MULTILINE)
_TCP_MODE = re.compile(r"^[ \t]*mode[ \t]+tcp\b", re.MULTILINE)
_ROUTES = re.compile(r"^[ \t]*(use_backend|default_backend)\b", re.MULTILINE)


@dataclass(frozen=True)
class Frontend:
    name: str
    ports: tuple[int, ...]  # wildcard binds without TLS
    routes: bool  # use_backend / default_backend
    body: str


def plain_frontends(config: str) -> list[Frontend]:
    """The ``frontend`` and ``listen`` sections of ``config`` with their plain-HTTP wildcard binds (none for a
    ``mode tcp`` section)."""
    marks = list(_SECTION.finditer(config))
    found = []
    for n, mark in enumerate(marks):
        if mark[1] not in ("frontend", "listen"):
            continue
        body = config[mark.end():marks[n + 1].start() if n + 1 < len(marks) else len(config)]
        # A mode tcp frontend (ssl-passthrough's SNI switch) binds without ssl but does not speak HTTP.
        tcp = _TCP_MODE.search(body) is not None
        ports = () if tcp else tuple(int(b[1]) for b in _PLAIN_BIND.finditer(body)
                                     if not re.search(r"\bssl\b", b["rest"]))
        found.append(Frontend(mark[2], ports, bool(_ROUTES.search(body)), body))
    return found


def serving_port(config: str, host: str) -> int | None:
    """The port of the plain-HTTP frontend that serves ``host``: one whose rules name the host, else the
    first that routes to backends (``use_backend``/``default_backend``; a stats or health frontend does
    not), else the first with a wildcard bind; None when no frontend binds a wildcard port."""
    candidates = [f for f in plain_frontends(config) if f.ports]
    named = re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w.-])", re.IGNORECASE)
    ranked = sorted(candidates, key=lambda f: (not (f.routes and named.search(f.body)), not f.routes))
    return ranked[0].ports[0] if ranked else None


@dataclass
class TrafficReport:
    """What ``count`` requests to ``target`` (with ``Host: host``) got back."""

    target: str
    host: str
    path: str
    count: int
    by_server: dict[str, int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> int:
        return self.statuses.get(200, 0)

    @property
    def servers(self) -> list[str]:
        return sorted(self.by_server)

    @property
    def flowed(self) -> bool:
        """Every request answered 200 by an echo backend."""
        return self.count > 0 and sum(self.by_server.values()) == self.count and self.ok == self.count

    def summary(self) -> str:
        served = ", ".join(f"{name} x{hits}" for name, hits in sorted(self.by_server.items())) or "no backend"
        other = {code: n for code, n in sorted(self.statuses.items()) if code != 200}
        extra = f"; other statuses {other}" if other else ""
        errors = f"; {len(self.errors)} error(s), first: {self.errors[0]}" if self.errors else ""
        return f"{self.count} x GET http://{self.host}{self.path} via {self.target}: {served}{extra}{errors}"


async def probe(address: str, host: str, *, path: str = "/", count: int = 6, request_timeout: float = 3.0,
                method: str = "GET", headers: dict[str, str] | None = None) -> TrafficReport:
    """``count`` sequential requests (GET unless ``method``) to ``http://address{path}`` with ``Host: host``
    and ``headers`` (fresh connection each, so that HAProxy's balancing shows)."""
    report = TrafficReport(target=address, host=host, path=path, count=count)
    by_server: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[int] = collections.Counter()
    # One client, a fresh connection per request all the same ("Connection: close").
    async with httpx.AsyncClient(timeout=request_timeout, trust_env=False, verify=default_ssl_context()) as client:
        for _ in range(count):
            try:
                response = await client.request(method, f"http://{address}{path}",
                                                headers={**(headers or {}), "Host": host, "Connection": "close"})
            except httpx.HTTPError as exc:
                report.errors.append(f"{type(exc).__name__}: {exc}".strip())
                continue
            statuses[response.status_code] += 1
            server = response.headers.get("x-echo-server")
            if server:
                by_server[server] += 1
    report.by_server = dict(by_server)
    report.statuses = dict(statuses)
    return report


async def wait_for_traffic(address: str, host: str, accept: Callable[[TrafficReport], bool], *, path: str = "/",
                           count: int = 6, within: float = 30.0, interval: float = 0.25) -> TrafficReport:
    """Probes until ``accept(report)`` holds or ``within`` seconds pass; returns the last report."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        report = await probe(address, host, path=path, count=count)
        if accept(report) or loop.time() >= deadline:
            return report
        await asyncio.sleep(interval)
