"""Fixtures for controller runs on the simulator (virtual time, real ``haproxy -c``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from simulator.cluster_objects import endpoint_slice, ingress
from simulator.harness import Harness

HarnessFactory = Callable[..., Any]


@pytest.fixture
async def make_harness(haproxy_bin: str) -> AsyncIterator[Callable[..., Any]]:
    started: list[Harness] = []

    async def make(**kwargs: Any) -> Harness:
        kwargs.setdefault("haproxy_binary", haproxy_bin)
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
    harness.apply(ingress("web", "web.example", "web"))
    harness.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))
    await harness.settle()
    return harness
