"""What a controller iteration is handed: the ports to the world and who this replica is.

The controller code never builds a Kubernetes client, an HTTP transport, a process or a clock itself;
it receives a ``ControllerPorts``. ``haptic.live`` fills it for a real cluster (the official client,
TCP, ``asyncio`` subprocesses, renders in a worker thread, the system clock); ``simulator.harness``
fills it in-process (the fake API, ``httpx.ASGITransport`` to a fake Dataplane per pod, a blocking
runner and inline renders so virtual time stands still during ``haproxy -c`` and renders, a virtual
clock and seeded ids).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from haptic.core import Clock, IdSource, RealClock, UuidIds
from haptic.k8s.api import KubeAPI
from haptic.validation.process import AsyncCommandRunner, AsyncSubprocessRunner
from haptic.validation.render_runner import RenderRunner, ThreadRenderRunner

#: Pod endpoint URL (``http://10.0.0.5:5555/v3``) -> the httpx transport reaching it; ``None`` means
#: httpx's default TCP transport.
DataplaneTransportFactory = Callable[[str], httpx.AsyncBaseTransport | None]


def tcp_transport(_url: str) -> httpx.AsyncBaseTransport | None:
    """The live factory: plain TCP through httpx's default transport."""
    return None


@dataclass(frozen=True)
class ControllerIdentity:
    """Who this replica is and which objects configure it (``POD_NAMESPACE``, ``POD_NAME``, CLI flags)."""

    namespace: str
    pod_name: str
    config_name: str = "haproxy-config"
    secret_name: str = "haproxy-credentials"

    def __post_init__(self) -> None:
        for name in ("namespace", "pod_name", "config_name", "secret_name"):
            if not getattr(self, name):
                raise ValueError(f"controller identity: {name} must not be empty")


@dataclass
class ControllerPorts:
    """Everything the controller needs from outside; one instance per controller process (replica)."""

    kube: KubeAPI
    identity: ControllerIdentity
    clock: Clock = field(default_factory=RealClock)
    ids: IdSource = field(default_factory=UuidIds)
    dataplane_transport: DataplaneTransportFactory = tcp_transport
    check_runner: AsyncCommandRunner = field(default_factory=AsyncSubprocessRunner)
    #: Where the coordinator renders: a worker thread with a hard deadline (the simulator: inline).
    render_runner: RenderRunner = field(default_factory=ThreadRenderRunner)
    #: Where the webhook's dry-run renders (its own, so that reviews never wait for the coordinator's render).
    webhook_render_runner: RenderRunner = field(default_factory=lambda: ThreadRenderRunner(name="haptic-webhook"))
    #: How templates' ``http.fetch`` reaches its URLs; None: TCP (the simulator: its fake HTTP source).
    http_transport: httpx.AsyncBaseTransport | None = None
    #: Runs blocking work off the loop (a config's validationTests): a worker thread (the simulator: inline).
    run_blocking: Callable[[Callable[[], Any]], Awaitable[Any]] = asyncio.to_thread
    haproxy_binary: str = "haproxy"
    #: HTTP timeout of one Dataplane API request.
    dataplane_timeout: float = 30.0
    #: Address published in Ingress ``status.loadBalancer``; empty: the HAProxy pods' IPs.
    publish_address: str = ""
    #: Logger name prefix, so that several replicas in one process log distinguishably.
    log_name: str = "haptic"

    def logger(self, name: str) -> logging.Logger:
        return logging.getLogger(f"{self.log_name}.{name}")
