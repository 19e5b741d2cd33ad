"""Faults as data: outages, refused connections, latency, throttling and injected write conflicts.

All windows are measured on the asyncio loop's clock so that they follow virtual time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from haptic.k8s.api import ApiError, Conflict, Unavailable

from .resources import ResourceType

WRITE_VERBS = ("create", "update", "patch", "delete")


def loop_time() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class Faults:
    """The active faults. Front-ends (the in-process client, the HTTP app) consult ``gate`` per request."""

    outage_until: float = float("-inf")
    refuse_until: float = float("-inf")
    throttle_until: float = float("-inf")
    unauthorized_until: float = float("-inf")
    retry_after: float = 1.0
    latency: float = 0.0
    latency_until: float = float("inf")
    conflicts: dict[str, int] = field(default_factory=dict)

    def outage(self, seconds: float) -> None:
        """Answer 503 to every request for ``seconds``."""
        self.outage_until = loop_time() + seconds

    def refuse(self, seconds: float) -> None:
        """Refuse connections for ``seconds`` (in-process: raise as a connection failure)."""
        self.refuse_until = loop_time() + seconds

    def throttle(self, seconds: float, retry_after: float = 1.0) -> None:
        """Answer 429 with ``Retry-After`` for ``seconds``."""
        self.throttle_until = loop_time() + seconds
        self.retry_after = retry_after

    def unauthorized(self, seconds: float) -> None:
        """Answer 401 for ``seconds`` (clients re-authenticate; kopf re-runs its login handlers)."""
        self.unauthorized_until = loop_time() + seconds

    def add_latency(self, seconds: float, duration: float | None = None) -> None:
        """Delay every answer by ``seconds`` (for ``duration`` seconds, or until cleared)."""
        self.latency = seconds
        self.latency_until = float("inf") if duration is None else loop_time() + duration

    def inject_conflicts(self, resource: str, count: int) -> None:
        """Answer 409 Conflict to the next ``count`` writes of ``resource`` (plural or ``plural.group``)."""
        self.conflicts[resource] = self.conflicts.get(resource, 0) + count

    def clear(self) -> None:
        self.outage_until = self.refuse_until = self.throttle_until = self.unauthorized_until = float("-inf")
        self.latency = 0.0
        self.conflicts.clear()

    def refusing(self) -> bool:
        return loop_time() < self.refuse_until

    def snapshot(self) -> dict[str, Any]:
        now = loop_time()
        return {
            "outage": max(0.0, self.outage_until - now),
            "refuse": max(0.0, self.refuse_until - now),
            "throttle": max(0.0, self.throttle_until - now),
            "unauthorized": max(0.0, self.unauthorized_until - now),
            "latency": self.latency if now < self.latency_until else 0.0,
            "conflicts": dict(sorted(self.conflicts.items())),
        }

    def quiet(self) -> bool:
        """True when no fault was ever configured (the hot path skips ``gate``)."""
        return (self.latency == 0 and not self.conflicts and self.outage_until == self.refuse_until
                == self.throttle_until == self.unauthorized_until == float("-inf"))

    async def gate(self, verb: str, rt: ResourceType | None) -> None:
        """Applies latency, then raises the error a faulty server would answer for this request."""
        now = loop_time()
        if self.latency > 0 and now < self.latency_until:
            await asyncio.sleep(self.latency)
            now = loop_time()
        if now < self.refuse_until:
            raise Unavailable("connection refused (injected fault)", {"fault": "refuse"})
        if now < self.unauthorized_until:
            raise ApiError(401, "Unauthorized", "Unauthorized (injected fault)")
        if now < self.outage_until:
            raise Unavailable("the server is currently unable to handle the request (injected outage)")
        if now < self.throttle_until:
            err = Unavailable("too many requests, please try again later (injected throttling)", code=429)
            err.retry_after = self.retry_after
            err.details = {"retryAfterSeconds": int(self.retry_after + 0.999)}
            raise err
        if rt is not None and verb in WRITE_VERBS and self.conflicts:
            for name in (rt.describe(), rt.plural):
                left = self.conflicts.get(name, 0)
                if left > 0:
                    if left == 1:
                        del self.conflicts[name]
                    else:
                        self.conflicts[name] = left - 1
                    raise Conflict(
                        f"Operation cannot be fulfilled on {rt.describe()}: the object has been modified; "
                        "please apply your changes to the latest version and try again (injected conflict)",
                        {"group": rt.group, "kind": rt.plural},
                    )

