"""Traffic checks through HAProxy: send requests, record which echo backend answered each one."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx


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


async def probe(address: str, host: str, *, path: str = "/", count: int = 6,
                request_timeout: float = 3.0) -> TrafficReport:
    """``count`` sequential GETs to ``http://address{path}`` with ``Host: host`` (fresh connection each,
    so that HAProxy's balancing shows)."""
    report = TrafficReport(target=address, host=host, path=path, count=count)
    by_server: collections.Counter[str] = collections.Counter()
    statuses: collections.Counter[int] = collections.Counter()
    for _ in range(count):
        try:
            async with httpx.AsyncClient(timeout=request_timeout, trust_env=False) as client:
                response = await client.get(f"http://{address}{path}", headers={"Host": host, "Connection": "close"})
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
