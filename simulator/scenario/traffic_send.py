"""Sending a ``traffic`` expectation's request to a real haproxy and reading the answer as a ``TrafficResult``.

Shared by the backends with real haproxy pods (``local``, ``cluster``): which port of the pod's config
the request goes to, and what the echo backend behind it reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from simulator.local.http_client import HttpRequest, send
from simulator.local.listeners import describe, listener_port
from simulator.local.traffic import serving_port

from .backend import NotApplicable, TrafficResult
from .traffic_spec import TrafficExpectation


def traffic_port(pod: str, config: str, check: TrafficExpectation) -> int:
    """The port ``check`` goes to in the config ``pod`` runs: its ``port``, its ``listener``'s, the first TLS
    frontend's for https, the plain-HTTP frontend serving its host for http (not a stats frontend)."""
    if check.port is not None:
        return check.port
    if check.listener is None and check.scheme == "http":
        port = serving_port(config, check.host)
    else:
        port = listener_port(config, tls=check.scheme == "https", name=check.listener)
    if port is None:
        wanted = f"frontend {check.listener}" if check.listener else \
            "a frontend with a TLS wildcard bind" if check.scheme == "https" else "a plain-HTTP wildcard bind"
        raise NotApplicable(f"pod {pod} runs no {wanted} to send {check.scheme} traffic to; it has "
                            f"{describe(config)}")
    return port


async def send_traffic(address: str, port: int, check: TrafficExpectation,
                       names: Mapping[str, tuple[str, ...]]) -> TrafficResult:
    """One request; ``backend`` is the echo server that answered (``None``: haproxy answered itself),
    ``names`` maps its address to the scenario's names for that endpoint."""
    request = HttpRequest(address=address, port=port, host=check.host, path=check.path, method=check.method,
                          headers=dict(check.headers), body=(check.body or "").encode(),
                          tls=check.scheme == "https", sni=check.server_name)
    answer = await send(request)
    if answer.error:
        return TrafficResult(status=0, body=answer.error)
    server = answer.header("x-echo-server")
    seen: dict[str, Any] | None = None
    if server is not None:
        try:
            seen = json.loads(answer.body)
        except ValueError:
            seen = None
    return TrafficResult(status=answer.status, backend=server, body=answer.body.decode("utf-8", "replace"),
                         headers=answer.headers, backend_names=names.get(server or "", ()), seen=seen,
                         certificate=answer.certificate)
