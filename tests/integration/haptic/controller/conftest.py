"""Fixtures for controller runs on the simulator (virtual time, real ``haproxy -c``).

The clusters run the shipped example config (the Ingress template library) unless a test passes its
own ``config``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness

HarnessFactory = Callable[..., Any]


def backend(ingress_name: str, service_name: str | None = None, namespace: str = "default", port: int = 80) -> str:
    """The Ingress library's backend name for an Ingress path to ``service_name:port``."""
    return f"ing_{namespace}_{ingress_name}_{service_name or ingress_name}_{port}"


def routed(h: Harness, pod: int | str, host: str, ingress_name: str, service_name: str | None = None) -> bool:
    """The pod's prefix map routes ``host/`` to the Ingress's backend."""
    content = h.stored_file(pod, "maps", "path-prefix.map") or ""
    return f"{host}/ {backend(ingress_name, service_name)}" in content.splitlines()


def add_app(h: Harness, name: str, host: str, addresses: list[str], namespace: str = "default") -> None:
    """A Service, its EndpointSlice and an Ingress routing ``host`` to it."""
    h.apply(service(name, namespace))
    h.apply(endpoint_slice(name, addresses, namespace))
    h.apply(ingress(name, host, name, namespace))


@pytest.fixture
async def make_harness(haproxy_bin: str) -> AsyncIterator[Callable[..., Any]]:
    started: list[Harness] = []

    async def make(**kwargs: Any) -> Harness:
        kwargs.setdefault("haproxy_binary", haproxy_bin)
        kwargs.setdefault("ingress_library", True)
        harness = await Harness(**kwargs).start()
        started.append(harness)
        return harness

    yield make
    # Fixture teardown runs outside looptime's compacted time: stop in virtual time too, or every timer
    # the controllers still hold would be waited for in real time.
    loop = asyncio.get_running_loop()
    enabled = getattr(loop, "looptime_enabled", None)
    for harness in started:
        if enabled is not None:
            with enabled():
                await harness.stop()
        else:
            await harness.stop()


async def web_cluster(make: Callable[..., Any], **kwargs: Any) -> Harness:
    """Two pods, one controller, one Ingress with two endpoints, settled."""
    harness: Harness = await make(**kwargs)
    add_app(harness, "web", "web.example", ["10.1.0.1", "10.1.0.2"])
    await harness.settle()
    return harness
